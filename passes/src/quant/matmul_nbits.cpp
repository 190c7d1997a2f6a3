// Pre-quantized com.microsoft MatMulNBits (4-bit) -> et_vk.linear_q4gsw. MatMulNBits stores B as
// [N, blocks, block/2] bytes, element 2j in the low nibble and 2j+1 in the high one, value q + zp with
// zp = 8 by default: for symmetric blocks that is byte for byte ET-VK's (odd+8)<<4 | (even+8) layout.
// Zero points other than 8 would be ignored by the runtime, so such layers stay out with the reason.
#include <fmt/format.h>

#include <cstring>

#include "matmul_nbits.h"
#include "vkc/ir/op_registry.h"

namespace vkc::passes::quant {
namespace {

std::optional<std::string> all_default_zero_points(const ir::Value* zp, int64_t N, int64_t blocks) {
  if (!zp) return std::nullopt;
  if (!zp->is_constant()) return std::string("zero points are not a constant");
  if (zp->dtype() != ir::DType::UInt8) return std::string("float zero points (asymmetric blocks) are not supported");
  const auto bytes = zp->data().as<uint8_t>();
  const int64_t row = (blocks + 1) / 2;  // two 4-bit zero points per byte, rows padded to a byte
  if (static_cast<int64_t>(bytes.size()) != N * row) return std::string("zero points have an unexpected size");
  for (int64_t n = 0; n < N; ++n)
    for (int64_t b = 0; b < blocks; ++b) {
      const uint8_t v = bytes[n * row + b / 2];
      if (((b % 2) ? v >> 4 : v & 0xF) != 8)
        return std::string("asymmetric zero points (ET-VK's 4-bit linear ignores zero points)");
    }
  return std::nullopt;
}

std::optional<std::string> lower_one(ir::Graph& g, ir::Node* n) {
  const int64_t K = n->attr_int("K", 0), N = n->attr_int("N", 0), bits = n->attr_int("bits", 4);
  const int64_t block = n->attr_int("block_size", 0);
  ir::Value *a = n->input(0), *b = n->input(1), *scales = n->input(2), *zp = n->input(3), *bias = n->input(5);
  if (bits != 4) return fmt::format("bits={} (only 4-bit MatMulNBits is supported)", bits);
  if (n->input(4)) return std::string("g_idx is not supported");
  if (!b || !b->is_constant() || b->dtype() != ir::DType::UInt8) return std::string("B is not a constant uint8 tensor");
  if (!scales || !scales->is_constant() || scales->dtype() != ir::DType::Float32)
    return std::string("scales are not a constant fp32 tensor");
  if (block <= 0 || K % block != 0) return fmt::format("K={} is not a multiple of block_size={}", K, block);
  if (K % 8 != 0 || N % 4 != 0) return fmt::format("K={} must be a multiple of 8 and N={} of 4", K, N);
  const int64_t blocks = K / block;
  if (b->data().size() != static_cast<size_t>(N * K / 2)) return std::string("B has an unexpected size");
  if (scales->data().size() != static_cast<size_t>(N * blocks * 4)) return std::string("scales have an unexpected size");
  if (auto why = all_default_zero_points(zp, N, blocks)) return why;
  if (bias && (!bias->is_constant() || bias->dtype() != ir::DType::Float32))
    return std::string("bias is not a constant fp32 tensor");
  if (!a || !a->shape().is_static()) return std::string("input shape is not static");
  // The bytes are reused as they are; only the shape changes ([N, blocks, block/2] -> [N, K/2]).
  ir::Value* w = g.add_constant(g.unique_name(b->name() + "_q4"),
                                ir::TensorType{ir::DType::UInt8, ir::Shape::of({N, K / 2})}, b->data());
  std::vector<float> s(static_cast<size_t>(N * blocks));
  std::memcpy(s.data(), scales->data().data(), s.size() * sizeof(float));
  const int64_t n4 = (N + 3) / 4 * 4;
  std::vector<uint8_t> t(static_cast<size_t>(blocks * n4) * sizeof(float), 0);
  auto* tf = reinterpret_cast<float*>(t.data());
  for (int64_t r = 0; r < N; ++r)
    for (int64_t c = 0; c < blocks; ++c) tf[c * n4 + r] = s[r * blocks + c];
  ir::Value* st = g.add_constant(g.unique_name(scales->name() + "_t"),
                                 ir::TensorType{ir::DType::Float32, ir::Shape::of({blocks, n4})},
                                 ir::TensorData::owned(std::move(t)));
  if (!n->output(0)->shape().is_static()) {
    auto sizes = a->shape().sizes();
    sizes.back() = N;
    n->output(0)->set_type({ir::DType::Float32, ir::Shape::of(sizes)});
  }
  n->morph(ir::kVulkanDomain, "et_vk.linear_q4gsw.default", {a, w, st, bias}, {{"group_size", block}});
  return std::nullopt;
}

}  // namespace

void lower_matmul_nbits(ir::Graph& g, std::map<std::string, std::string>& not_lowered) {
  for (ir::Node* n : g.nodes()) {
    if (!n->is(ir::kMicrosoftDomain, "MatMulNBits")) continue;
    if (auto why = lower_one(g, n))
      not_lowered[n->name()] = "MatMulNBits: " + *why;
    else
      not_lowered.erase(n->name());
  }
}

}  // namespace vkc::passes::quant
