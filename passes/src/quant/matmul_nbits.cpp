// Pre-quantized com.microsoft MatMulNBits, computed exactly as onnxruntime defines it:
//   W[n, k] = s[n, b] * (q[n, k] - z[n, b]),  b = k / block_size,  z = 2^(bits-1) by default.
// B is [N, blocks, block * bits / 8] bytes; for 4 bits element 2j is the low nibble, 2j+1 the high
// one, which is byte for byte ET-VK's (odd+8)<<4 | (even+8) layout when read as q - 8.
//
// 4 bits -> et_vk.linear_q4gsw over the bytes as they are (symmetric around 8), plus, where zero
// points differ from 8, the exact remainder
//   W = s * (q - 8) + s * (8 - z)  =>  y = linear_q4gsw(x) + xsum * C^T,  C[n, b] = s[n, b] * (8 - z[n, b]),
// with xsum[.., b] the sum of x over block b (a view, a sum and a small fp linear). A K that is not a
// multiple of the block (the quantizer pads the last block) pads x with zeros to the padded K.
// 8 bits -> the weights dequantized on the host (ET-VK has no 8-bit group-wise linear): aten.linear.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "matmul_nbits.h"
#include "vkc/ir/half.h"
#include "vkc/ir/op_registry.h"

namespace vkc::passes::quant {
namespace {

// A constant float tensor (f32 or f16) as f32 values, or empty if it is neither.
std::vector<float> float_values(const ir::Value* v) {
  if (!v || !v->is_constant()) return {};
  const size_t n = v->shape().numel();
  std::vector<float> out(n);
  if (v->dtype() == ir::DType::Float32 && v->data().size() == n * 4) {
    std::memcpy(out.data(), v->data().data(), n * 4);
  } else if (v->dtype() == ir::DType::Float16 && v->data().size() == n * 2) {
    const auto h = v->data().as<uint16_t>();
    for (size_t i = 0; i < n; ++i) out[i] = ir::half_to_float(h[i]);
  } else {
    return {};
  }
  return out;
}

struct Layer {
  int64_t K = 0, N = 0, bits = 4, block = 0, blocks = 0;
  std::vector<float> scales;  // [N, blocks]
  std::vector<float> zeros;   // [N, blocks], the default where absent
  bool default_zeros = true;
};

// Reads and checks the layer's constants; the reason where it cannot be computed exactly.
std::optional<std::string> read_layer(const ir::Node* n, Layer& L) {
  L.K = n->attr_int("K", 0);
  L.N = n->attr_int("N", 0);
  L.bits = n->attr_int("bits", 4);
  L.block = n->attr_int("block_size", 0);
  const ir::Value *a = n->input(0), *b = n->input(1), *zp = n->input(3), *g_idx = n->input(4), *bias = n->input(5);
  if (L.bits != 4 && L.bits != 8) return fmt::format("bits={} (4 and 8 are supported)", L.bits);
  if (L.K <= 0 || L.N <= 0 || L.block < 16 || (L.block & (L.block - 1)) != 0)
    return fmt::format("K={}, N={}, block_size={} are not a valid layer", L.K, L.N, L.block);
  L.blocks = (L.K + L.block - 1) / L.block;
  if (!b || !b->is_constant() || b->dtype() != ir::DType::UInt8) return std::string("B is not a constant uint8 tensor");
  if (b->data().size() != static_cast<size_t>(L.N * L.blocks * L.block * L.bits / 8))
    return std::string("B has an unexpected size");
  L.scales = float_values(n->input(2));
  if (L.scales.size() != static_cast<size_t>(L.N * L.blocks)) return std::string("scales are not a constant float tensor of N x blocks");
  const float default_zero = static_cast<float>(1 << (L.bits - 1));
  L.zeros.assign(L.scales.size(), default_zero);
  if (zp) {
    if (!zp->is_constant()) return std::string("zero points are not a constant");
    if (zp->dtype() == ir::DType::UInt8) {
      const auto bytes = zp->data().as<uint8_t>();
      const int64_t row = (L.blocks * L.bits + 7) / 8;  // packed per row, rows padded to a byte
      if (static_cast<int64_t>(bytes.size()) != L.N * row) return std::string("zero points have an unexpected size");
      for (int64_t r = 0; r < L.N; ++r)
        for (int64_t k = 0; k < L.blocks; ++k) {
          const uint8_t v = L.bits == 8 ? bytes[r * row + k] : bytes[r * row + k / 2];
          L.zeros[r * L.blocks + k] = L.bits == 8 ? v : ((k % 2) ? v >> 4 : v & 0xF);
        }
    } else {
      L.zeros = float_values(zp);  // float zero points, in the scales' dtype
      if (L.zeros.size() != L.scales.size()) return std::string("zero points are not N x blocks values");
    }
    L.default_zeros = std::all_of(L.zeros.begin(), L.zeros.end(), [&](float z) { return z == default_zero; });
  }
  if (g_idx) {  // act-order: trivial when every k is in its own block
    if (!g_idx->is_constant() || g_idx->dtype() != ir::DType::Int32 || g_idx->shape().numel() != L.K)
      return std::string("g_idx is not a constant int32 tensor of K values");
    const auto idx = g_idx->data().as<int32_t>();
    for (int64_t k = 0; k < L.K; ++k)
      if (idx[k] != k / L.block) return fmt::format("g_idx reorders groups (k={} is in group {})", k, idx[k]);
  }
  if (bias && (!bias->is_constant() || bias->dtype() != ir::DType::Float32))
    return std::string("bias is not a constant fp32 tensor");
  if (!a || !a->shape().is_static() || a->dtype() != ir::DType::Float32)
    return std::string("input is not an fp32 tensor of static shape");
  if (a->shape().sizes().back() != L.K) return std::string("input's last dim is not K");
  return std::nullopt;
}

class Lowering {
 public:
  Lowering(ir::Graph& g, ir::Node* n, const Layer& L) : g_(g), n_(n), L_(L) {}

  // The dequantized [N, K] weight, read by aten.linear (8 bits, or a shape the 4-bit op cannot take).
  ir::Value* lower_dequantized() {
    const auto bytes = n_->input(1)->data().as<uint8_t>();
    const int64_t row = L_.blocks * L_.block * L_.bits / 8;
    std::vector<float> w(static_cast<size_t>(L_.N * L_.K));
    for (int64_t r = 0; r < L_.N; ++r)
      for (int64_t k = 0; k < L_.K; ++k) {
        const size_t s = static_cast<size_t>(r * L_.blocks + k / L_.block);
        const uint8_t b = bytes[r * row + (L_.bits == 8 ? k : k / 2)];
        const int q = L_.bits == 8 ? b : ((k % 2) ? b >> 4 : b & 0xF);
        w[r * L_.K + k] = L_.scales[s] * (static_cast<float>(q) - L_.zeros[s]);
      }
    ir::Value* wc = f32_constant(n_->input(1)->name() + "_f32", {L_.N, L_.K}, w);
    set_output_shape();
    n_->morph(ir::kVulkanDomain, "aten.linear.default", {n_->input(0), wc, n_->input(5)}, {});
    return wc;
  }

  // 4 bits: linear_q4gsw over the bytes, the zero-point remainder where needed; returns the
  // remainder's fp weight C (nullptr without one).
  ir::Value* lower_4bit() {
    const int64_t Kp = L_.blocks * L_.block;
    ir::Value* x = n_->input(0);
    if (Kp != L_.K) {  // the padded last block reads zeros
      auto shape = x->shape().sizes();
      shape.back() = Kp;
      x = add("aten.constant_pad_nd.default", {x}, shape, {{"pad", std::vector<int64_t>{0, Kp - L_.K}}, {"value", 0.0}});
    }
    ir::Value* w = g_.add_constant(g_.unique_name(n_->input(1)->name() + "_q4"),
                                   ir::TensorType{ir::DType::UInt8, ir::Shape::of({L_.N, Kp / 2})}, n_->input(1)->data());
    const int64_t n4 = (L_.N + 3) / 4 * 4;  // scales as the op reads them: [blocks, N padded to 4]
    std::vector<float> st(static_cast<size_t>(L_.blocks * n4), 0.0f);
    for (int64_t r = 0; r < L_.N; ++r)
      for (int64_t c = 0; c < L_.blocks; ++c) st[c * n4 + r] = L_.scales[r * L_.blocks + c];
    ir::Value* s = f32_constant(n_->input(2)->name() + "_t", {L_.blocks, n4}, st);
    set_output_shape();
    ir::Value* bias = n_->input(5);
    if (L_.default_zeros) {
      n_->morph(ir::kVulkanDomain, "et_vk.linear_q4gsw.default", {x, w, s, bias}, {{"group_size", L_.block}});
      return nullptr;
    }
    // y = linear_q4gsw(x) + xsum * C^T (+ bias), xsum[.., b] = sum of x over block b.
    std::vector<float> c(static_cast<size_t>(L_.N * L_.blocks));
    for (size_t i = 0; i < c.size(); ++i) c[i] = L_.scales[i] * (8.0f - L_.zeros[i]);
    ir::Value* cw = f32_constant(n_->input(2)->name() + "_zero_point_term", {L_.N, L_.blocks}, c);
    auto lead = x->shape().sizes();
    lead.pop_back();
    auto with = [&](std::vector<int64_t> tail) {
      auto s2 = lead;
      s2.insert(s2.end(), tail.begin(), tail.end());
      return s2;
    };
    const int64_t rank = static_cast<int64_t>(lead.size()) + 2;
    ir::Value* blocked = add("aten.view_copy.default", {x}, with({L_.blocks, L_.block}), {{"size", with({L_.blocks, L_.block})}});
    ir::Value* sums = add("aten.sum.dim_IntList", {blocked}, with({L_.blocks, 1}),
                          {{"dim", std::vector<int64_t>{rank - 1}}, {"keepdim", true}});
    ir::Value* xsum = add("aten.view_copy.default", {sums}, with({L_.blocks}), {{"size", with({L_.blocks})}});
    ir::Value* term = add("aten.linear.default", {xsum, cw, bias}, with({L_.N}), {});
    ir::Value* y = add("et_vk.linear_q4gsw.default", {x, w, s, nullptr}, with({L_.N}), {{"group_size", L_.block}});
    n_->morph(ir::kVulkanDomain, "aten.add.Tensor", {y, term}, {});
    return cw;
  }

 private:
  ir::Value* f32_constant(const std::string& name, std::vector<int64_t> shape, const std::vector<float>& v) {
    std::vector<uint8_t> bytes(v.size() * sizeof(float));
    std::memcpy(bytes.data(), v.data(), bytes.size());
    return g_.add_constant(g_.unique_name(name), ir::TensorType{ir::DType::Float32, ir::Shape::of(shape)},
                           ir::TensorData::owned(std::move(bytes)));
  }

  ir::Value* add(std::string_view op, std::vector<ir::Value*> ins, std::vector<int64_t> shape, ir::AttributeMap attrs) {
    ir::Node* m = g_.add_node(ir::kVulkanDomain, std::string(op), std::move(ins),
                              {{ir::DType::Float32, ir::Shape::of(shape)}}, g_.unique_name(n_->name() + "_nbits"), n_);
    m->attrs() = std::move(attrs);
    return m->output(0);
  }

  void set_output_shape() {
    if (n_->output(0)->shape().is_static()) return;
    auto sizes = n_->input(0)->shape().sizes();
    sizes.back() = L_.N;
    n_->output(0)->set_type({ir::DType::Float32, ir::Shape::of(sizes)});
  }

  ir::Graph& g_;
  ir::Node* n_;
  const Layer& L_;
};

}  // namespace

std::set<const ir::Value*> lower_matmul_nbits(ir::Graph& g, std::map<std::string, std::string>& not_lowered,
                                              std::vector<QuantLayerReport>& report) {
  std::set<const ir::Value*> keep_float;
  for (ir::Node* n : g.nodes()) {
    if (!n->is(ir::kMicrosoftDomain, "MatMulNBits")) continue;
    QuantLayerReport rep;
    rep.node = n->name();
    rep.weight = n->input(1) ? n->input(1)->name() : "";
    rep.kind = "linear";
    rep.source = "MatMulNBits";
    Layer L;
    if (auto why = read_layer(n, L)) {
      not_lowered[n->name()] = "MatMulNBits: " + *why;
      rep.rows = L.N;
      rep.cols = L.K;
      rep.reason = *why;
      report.push_back(std::move(rep));
      continue;
    }
    not_lowered.erase(n->name());
    rep.rows = L.N;
    rep.cols = L.K;
    rep.bits = static_cast<int>(L.bits);
    rep.group_size = L.block;
    rep.zero_points = !L.default_zeros;
    rep.bytes_before = n->input(1)->data().size() + L.scales.size() * 4 + (n->input(3) ? n->input(3)->data().size() : 0);
    Lowering low(g, n, L);
    if (L.bits == 8 || L.N % 4 != 0) {
      keep_float.insert(low.lower_dequantized());
      rep.quantized = false;
      rep.op = "aten.linear.default";
      rep.reason = L.bits == 8 ? "8-bit blocks dequantized to fp32 on the host (ET-VK has no 8-bit group-wise linear)"
                               : fmt::format("N={} is not a multiple of 4 (the 4-bit linear's): dequantized to fp32", L.N);
      rep.bytes_after = static_cast<uint64_t>(L.N * L.K) * 4;
    } else {
      if (ir::Value* c = low.lower_4bit()) keep_float.insert(c);
      rep.quantized = true;
      rep.op = L.default_zeros ? "et_vk.linear_q4gsw.default" : "et_vk.linear_q4gsw.default + aten.linear.default (zero points)";
      rep.bytes_after = static_cast<uint64_t>(L.N * L.blocks * L.block / 2) + L.scales.size() * 4 +
                        (L.default_zeros ? 0 : L.scales.size() * 4);
    }
    report.push_back(std::move(rep));
  }
  return keep_float;
}

}  // namespace vkc::passes::quant
