// Quantized operators on the GPU: the int8 and int4 weight linears (linear_quantized.glsl).
#include <fmt/format.h>

#include "vk_encoder.h"

namespace vkc::runtime::vk {
namespace {

// aten._weight_int8pack_mm(x, w [N, K] int8, scales [N]) and
// et_vk.linear_q4gsw(x, w [N, pad8(K) / 2] uint8, scales [K / group, >= N], group, bias?).
void quantized_linear(Encoder& e) {
  GpuTensor& out = e.out();
  const bool q4 = e.op() == "et_vk.linear_q4gsw.default";
  GpuTensor& in = e.tensor(0);
  e.require_rep(in, out, "the input", true);
  const int64_t n = out.dims.back(), k = in.dims.back();
  const int64_t row_bytes = q4 ? (k + 7) / 8 * 4 : k;
  if ((n * row_bytes) % 4 != 0) e.fail(fmt::format("weights of {} bytes are not whole 32-bit words", n * row_bytes));
  const VkBuffer weight = e.raw(1, q4 ? ir::DType::UInt8 : ir::DType::Int8, n * row_bytes);
  int32_t group = 0, stride = 0;
  VkBuffer scales;
  if (q4) {
    group = static_cast<int32_t>(e.int_arg(3));
    const GpuTensor& s = e.constant(2, ir::DType::Float32);
    if (group <= 0 || k % group != 0 || s.dims.size() != 2 || s.dims[0] != k / group || s.dims[1] < n)
      e.fail(fmt::format("scales [{}] do not fit K={}, N={}, group {}", fmt::join(s.dims, ", "), k, n, group));
    stride = static_cast<int32_t>(s.dims[1]);
    scales = s.buffer.buffer;
  } else {
    scales = e.raw(2, ir::DType::Float32, n);
  }
  const bool has_bias = q4 && !e.is_null(4);
  const VkBuffer bias = has_bias ? e.raw(4, ir::DType::Float32, n) : e.filled(1, 0, ir::DType::Float32);
  const auto& v = e.variant(out);
  Push p(v);
  p.iv("out_sizes", out.sizes).i("k", static_cast<int32_t>(k)).i("group", group).i("scales_stride", stride);
  p.i("has_bias", has_bias ? 1 : 0);
  e.dispatch(v, {out.resource(), in.resource(), {weight, VK_NULL_HANDLE}, {scales, VK_NULL_HANDLE}, {bias, VK_NULL_HANDLE}},
             p, out.items());
}

}  // namespace

void add_quant_ops(std::unordered_map<std::string, OpEncoder>& t) {
  t["aten._weight_int8pack_mm.default"] = quantized_linear;
  t["et_vk.linear_q4gsw.default"] = quantized_linear;
}

}  // namespace vkc::runtime::vk
