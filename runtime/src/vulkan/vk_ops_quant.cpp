// Quantized operators on the GPU: the int8 and int4 weight linears (linear_quantized.glsl), the
// 8da4w pair choose_qparams_affine (choose_qparams.glsl) + linear_dq8ca_q4gsw (linear_dq8ca.glsl),
// and the int4 embedding (embedding_q4.glsl).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <optional>
#include <tuple>

#include "vk_encoder.h"

namespace vkc::runtime::vk {
namespace {

// The int4 grouped scales [K / group, >= N] of a linear (argument i), with their row stride.
std::pair<VkBuffer, int32_t> q4_scales(Encoder& e, size_t i, int64_t n, int64_t k, int64_t group) {
  const GpuTensor& s = e.constant(i, ir::DType::Float32);
  if (group <= 0 || k % group != 0 || s.dims.size() != 2 || s.dims[0] != k / group || s.dims[1] < n)
    e.fail(fmt::format("scales [{}] do not fit K={}, N={}, group {}", fmt::join(s.dims, ", "), k, n, group));
  return {s.buffer.buffer, static_cast<int32_t>(s.dims[1])};
}

// The int4 matrix-vector kernels' family for output `out`: the _sg variants where subgroups add the
// partial sums, and of those the _dot ones (the row's inputs as 16-bit integers, a scale a chunk of
// 32, integer dot products) for f16 activations, whose own rounding is coarser than theirs, where the
// device has fast packed 4x8-bit dot products (VKC_VULKAN_INT_DOT: Encoder::integer_dot_product).
std::string q4_gemv(const Encoder& e, const GpuTensor& out) {
  if (!e.subgroup_arithmetic()) return "linear_q4_gemv";
  return out.dtype == ir::DType::Float16 && e.integer_dot_product() ? "linear_q4_gemv_dot" : "linear_q4_gemv_sg";
}

// An MLP's int4 gate and up projections with SiLU(gate) * up (find_gated_pair), or Q, K and V
// (sibling linears, find_sibling_linears), of one group size in one dispatch: linear_q4_gemv_dual /
// _multi (+ _norm).
bool q4_linear_group(Encoder& e, GpuTensor& out, GpuTensor& src, int64_t k, int32_t group,
                     const Encoder::PendingNorm* norm) {
  const auto& values = e.graph()->values;
  const auto buffers = [&](const serializer::VkOperatorCall& c, int64_t n) -> std::optional<LinearBuffers> {
    const auto* g = std::get_if<int64_t>(&values.at(static_cast<size_t>(c.args[3])));
    const auto& sd = e.vk_tensor(c.args[2]).dims;
    if (!g || *g != group || sd.size() != 2 || sd[0] != k / group || sd[1] < n) return std::nullopt;
    const bool has_bias = c.args.size() > 5 && !std::holds_alternative<serializer::VkNull>(
                                                   values.at(static_cast<size_t>(c.args[4])));
    return LinearBuffers{{e.raw_value(c.args[1], ir::DType::UInt8, n * ((k + 7) / 8 * 4)),
                          e.raw_value(c.args[2], ir::DType::Float32, sd[0] * sd[1]),
                          has_bias ? e.raw_value(c.args[4], ir::DType::Float32, n) : e.filled(1, 0, ir::DType::Float32)},
                         has_bias, static_cast<int32_t>(sd[1])};
  };
  const auto push = [&](Push& p, const ivec4& strides) {
    p.i("group", group).i("scales_stride", strides[0]).iv("multi_stride", strides);
  };
  if (const GatedPair pair = find_gated_pair(e, out, norm, q4_linear_takes_gemv_norm); pair.up)
    return dispatch_linear_group(e, q4_gemv(e, out), out, src, k, norm, {{&e.call(), pair.result}, {pair.up}}, true,
                                 kGatedPairCalls, buffers, push);
  const std::vector<SiblingLinear> sibs = find_sibling_linears(e, out, k, norm, q4_linear_takes_gemv_norm);
  return sibs.size() >= 2 && dispatch_linear_group(e, q4_gemv(e, out), out, src, k, norm, sibs, false,
                                                   sibling_calls_after(e, sibs), buffers, push);
}

// aten._weight_int8pack_mm(x, w [N, K] int8, scales [N]) and
// et_vk.linear_q4gsw(x, w [N, pad8(K) / 2] uint8, scales [K / group, >= N], group, bias?).
void quantized_linear(Encoder& e) {
  GpuTensor& out = e.out();
  const bool q4 = e.op() == "et_vk.linear_q4gsw.default";
  GpuTensor& in = e.tensor(0);
  e.require_rep(in, out, "the input", true);
  const int64_t n = out.dims.back(), k = in.dims.back();
  // An RMSNorm left to this linear (rms_norm): the _norm variant reads the norm's input.
  const Encoder::PendingNorm* norm = q4 ? e.pending_norm(e.id(0)) : nullptr;
  const int64_t row_bytes = q4 ? (k + 7) / 8 * 4 : k;
  if ((n * row_bytes) % 4 != 0) e.fail(fmt::format("weights of {} bytes are not whole 32-bit words", n * row_bytes));
  const VkBuffer weight = e.raw(1, q4 ? ir::DType::UInt8 : ir::DType::Int8, n * row_bytes);
  int32_t group = 0, stride = 0;
  VkBuffer scales;
  if (q4) {
    group = static_cast<int32_t>(e.int_arg(3));
    std::tie(scales, stride) = q4_scales(e, 2, n, k, group);
  } else {
    scales = e.raw(2, ir::DType::Float32, n);
  }
  const bool has_bias = q4 && !e.is_null(4);
  const VkBuffer bias = has_bias ? e.raw(4, ir::DType::Float32, n) : e.filled(1, 0, ir::DType::Float32);
  // Quantized linears keep the GPU rule on every device (the LLM decode figures were measured so).
  // One or a few rows on a GPU: 16-byte weight chunks (linear_quantized.yaml's _gemv variants).
  const bool gemv = (!q4 || group % 32 == 0) && use_gemv(out, k, q4 ? 32 : 16, e.cpu_device());
  const bool split_k = !gemv && use_split_k(out, k, false);
  if (norm && !gemv) e.fail("an RMSNorm was left to matrix-vector linears, but this one is not");
  GpuTensor& src = norm ? e.tensor_id(norm->x) : in;
  if (q4 && gemv && q4_linear_group(e, out, src, k, group, norm)) return;
  int32_t split = 0, op = 0;
  GpuTensor* other = nullptr;
  GpuTensor* fused = gemv ? gemv_epilogue(e, out, src, other, op) : nullptr;
  GpuTensor& target = fused ? *fused : gemv ? gemv_output(e, out, split) : out;
  const char* kind = fused ? "_gemv_ep" : gemv ? "_gemv" : split_k ? "_splitk" : "";
  const std::string family = q4 && gemv ? q4_gemv(e, out) + (fused ? "_ep" : "")
                                        : fmt::format("{}{}", q4 ? "linear_q4" : "linear_q8", kind);
  const std::string name = family + (norm ? "_norm" : "");
  const auto& v = e.variant(out, {}, gemv ? gemv_width(e, out, name, k) : name);
  Push p(v);
  p.iv("out_sizes", out.sizes).i("k", static_cast<int32_t>(k)).i("group", group).i("scales_stride", stride);
  p.i("has_bias", has_bias ? 1 : 0);
  if (gemv) p.i("out_split", split).i("epilogue_op", op);
  if (norm) p.f("norm_eps", norm->eps);
  std::vector<Resource> res{target.resource(), src.resource(), {weight, VK_NULL_HANDLE}, {scales, VK_NULL_HANDLE},
                            {bias, VK_NULL_HANDLE}};
  if (fused) res.push_back(other->resource());
  if (norm) res.push_back({norm->gamma, VK_NULL_HANDLE});
  e.dispatch(v, std::move(res), p,
             gemv ? gemv_items(out, v) : split_k ? out.items() * v.local_size[0] : out.items());
}

}  // namespace

bool q4_linear_takes_gemv_norm(Encoder& e, const serializer::VkOperatorCall& c, int32_t y) {
  if (c.name != "et_vk.linear_q4gsw.default" || c.args.size() < 5 || c.args[0] != y) return false;
  for (size_t i = 1; i < c.args.size(); ++i)
    if (c.args[i] == y) return false;
  const auto* x = std::get_if<serializer::VkTensor>(&e.graph()->values.at(static_cast<size_t>(y)));
  const auto* group = std::get_if<int64_t>(&e.graph()->values.at(static_cast<size_t>(c.args[3])));
  if (!x || !group || x->dims.empty() || *group % 32 != 0) return false;
  return use_gemv(e.tensor_id(c.args.back()), x->dims.back(), 32, e.cpu_device());
}

namespace {

// Whether every reader of choose_qparams' (scale, zero point) is an 8da4w linear over the same
// input that takes the matrix-vector kernel (and so can compute its row's parameters itself).
bool readers_quantize_their_rows(Encoder& e, const serializer::VkOperatorCall& producer, int32_t x, int32_t scale,
                                 int32_t zero) {
  const serializer::VkGraph& g = *e.graph();
  for (uint32_t o : g.output_ids)
    if (static_cast<int32_t>(o) == scale || static_cast<int32_t>(o) == zero) return false;
  bool any = false;
  for (const serializer::VkOperatorCall& c : g.chain) {
    if (&c == &producer) continue;
    bool reads = false;
    for (int32_t a : c.args) {
      reads = reads || a == scale || a == zero;
      if (const auto* l = std::get_if<serializer::VkValueList>(&g.values.at(static_cast<size_t>(a))))
        for (int32_t item : l->items)
          if (item == scale || item == zero) return false;
    }
    if (!reads) continue;
    if (c.name != "et_vk.linear_dq8ca_q4gsw.default" || c.args.size() < 8 || c.args[0] != x || c.args[1] != scale ||
        c.args[2] != zero)
      return false;
    const auto* group = std::get_if<int64_t>(&g.values.at(static_cast<size_t>(c.args[6])));
    const GpuTensor& in = e.tensor_id(x);
    if (!group || in.dims.empty() || !dq8ca_gemv(e.tensor_id(c.args.back()), in.dims.back(), *group, e.cpu_device()))
      return false;
    any = true;
  }
  return any;
}

// Whether choose_qparams call `c` (over its input x) may be left to its readers: int8's full range,
// a positive eps (the rows' parameters computed as it would) and only matrix-vector 8da4w linears
// over x reading its outputs. Sets eps.
bool qparams_left_to_linears(Encoder& e, const serializer::VkOperatorCall& c, float& eps) {
  const CallArgs a(e.graph(), &c, true);
  if (a.num_args() < 8) return false;
  const auto* l = std::get_if<serializer::VkValueList>(&e.graph()->values.at(static_cast<size_t>(c.args.back())));
  if (!l || l->items.size() != 2) return false;
  const std::vector<int32_t>& outs = l->items;
  eps = a.is_null(6) ? 1.1920929e-07f : static_cast<float>(a.float_arg(6));
  return a.opt_scalar(4).value_or(-128) == -128 && a.opt_scalar(5).value_or(127) == 127 && eps > 0 &&
         readers_quantize_their_rows(e, c, c.args[0], outs[0], outs[1]);
}

// torchao.choose_qparams_affine(input, "ASYMMETRIC", block [1, .., K], int8, qmin?, qmax?, eps?, ...)
// -> (scale, zero_point), one per row. On a GPU, when only 8da4w matrix-vector linears over the same
// input read them, those compute their row's parameters themselves (linear_dq8ca_q4_gemv_rowq) and
// no dispatch runs here.
void choose_qparams(Encoder& e) {
  const std::vector<int32_t> outs = e.value_list(e.num_args() - 1);
  if (outs.size() != 2) e.fail("expected (scale, zero_point) outputs");
  GpuTensor& scale = e.tensor_id(outs[0]);
  GpuTensor& zp = e.tensor_id(outs[1]);
  GpuTensor& x = e.tensor(0, &scale);
  if (e.string_arg(1) != "ASYMMETRIC") e.fail("only ASYMMETRIC mapping is supported");
  const auto block = e.int_list(2);
  for (size_t i = 0; i + 1 < block.size(); ++i)
    if (block[i] != 1) e.fail("only per-row blocks [1, ..., K] are supported");
  if (block.empty() || x.dims.empty() || block.back() != x.dims.back()) e.fail("only per-row blocks [1, ..., K] are supported");
  e.require_rep(x, scale, "the input", true);
  if (zp.texture != scale.texture || zp.dtype != ir::DType::Int32) e.fail("the zero point must be i32 like the scale's storage");
  if (scale.texture && scale.packed_dim != 0) e.fail("textures must be width-packed");
  const int32_t qmax = static_cast<int32_t>(e.opt_scalar(5).value_or(127));
  const float eps = e.is_null(6) ? 1.1920929e-07f : static_cast<float>(e.float_arg(6));
  if (float left_eps = 0; qparams_left_to_linears(e, e.call(), left_eps)) {
    e.row_quantized_in_linear[outs[0]] = left_eps;
    return;
  }
  const bool split_k = use_split_k(scale, x.dims.back(), false);
  const auto& v = e.variant(scale, {}, split_k ? "choose_qparams_splitk" : "choose_qparams");
  Push p(v);
  p.iv("in_sizes", x.sizes).i("qmin", static_cast<int32_t>(e.opt_scalar(4).value_or(-128)));
  p.i("qmax", qmax);
  p.f("eps", eps);
  e.dispatch(v, {scale.resource(), zp.resource(), x.resource()}, p,
             split_k ? scale.items() * v.local_size[0] : scale.items());
}

}  // namespace

bool dq8ca_takes_gemv_norm(Encoder& e, const serializer::VkOperatorCall& c, int32_t y) {
  float eps = 0;
  if (c.name == "torchao.choose_qparams_affine.default")
    return !c.args.empty() && c.args[0] == y && qparams_left_to_linears(e, c, eps);
  if (c.name != "et_vk.linear_dq8ca_q4gsw.default" || c.args.size() < 8 || c.args[0] != y) return false;
  for (size_t i = 1; i < c.args.size(); ++i)
    if (c.args[i] == y) return false;
  // Its row parameters from a choose_qparams over y that is left to its readers (they are all
  // such linears, this one included: readers_quantize_their_rows).
  for (const serializer::VkOperatorCall& q : e.graph()->chain) {
    if (q.name != "torchao.choose_qparams_affine.default" || q.args.empty() || q.args[0] != y) continue;
    const auto* l = std::get_if<serializer::VkValueList>(&e.graph()->values.at(static_cast<size_t>(q.args.back())));
    if (l && !l->items.empty() && l->items[0] == c.args[1]) return qparams_left_to_linears(e, q, eps);
  }
  return false;
}

namespace {

// The 8da4w matrix-vector kernels that compute their rows' parameters: the _sg variants (subgroup
// sums and row reductions) where the device has subgroup arithmetic, and of those the _dot ones
// (the row's int8 values staged once, integer dot products) where it also runs packed integer dot
// products fast (VKC_VULKAN_INT_DOT, VulkanDelegate::integer_dot_product).
std::string dq8ca_rowq(const Encoder& e) {
  if (!e.subgroup_arithmetic()) return "linear_dq8ca_q4_gemv_rowq";
  return e.integer_dot_product() ? "linear_dq8ca_q4_gemv_dot_rowq" : "linear_dq8ca_q4_gemv_sg_rowq";
}

// 8da4w linears computing their rows' parameters (choose_qparams left to them) as a group in one
// dispatch, as q4_linear_group does: an MLP's gate and up with SiLU(gate) * up
// (linear_dq8ca_q4_gemv_rowq_dual), or Q, K and V (_multi), of one group size (+ _norm). This
// call's buffers also bind its row parameters' tensors (bindings 5 and 6, not read).
bool dq8ca_linear_group(Encoder& e, GpuTensor& out, GpuTensor& src, int64_t k, int32_t group, float eps,
                        const Encoder::PendingNorm* norm) {
  const auto& values = e.graph()->values;
  const auto buffers = [&](const serializer::VkOperatorCall& c, int64_t n) -> std::optional<LinearBuffers> {
    const auto* g = std::get_if<int64_t>(&values.at(static_cast<size_t>(c.args[6])));
    const auto& sd = e.vk_tensor(c.args[5]).dims;
    if (!g || *g != group || sd.size() != 2 || sd[0] != k / group || sd[1] < n || c.args[1] != e.call().args[1])
      return std::nullopt;
    const bool has_bias = !std::holds_alternative<serializer::VkNull>(values.at(static_cast<size_t>(c.args[7])));
    LinearBuffers b{{e.raw_value(c.args[3], ir::DType::UInt8, n * ((k + 7) / 8 * 4)),
                     e.raw_value(c.args[5], ir::DType::Float32, sd[0] * sd[1]),
                     has_bias ? e.raw_value(c.args[7], ir::DType::Float32, n) : e.filled(1, 0, ir::DType::Float32)},
                    has_bias, static_cast<int32_t>(sd[1])};
    if (&c == &e.call()) b.after = {e.tensor(1).resource(), e.tensor(2).resource()};
    return b;
  };
  const auto push = [&](Push& p, const ivec4& strides) {
    p.i("group", group).i("scales_stride", strides[0]).iv("multi_stride", strides).f("eps", eps);
  };
  const auto takes = [](Encoder& en, const serializer::VkOperatorCall& c, int32_t y) {
    return c.name == "et_vk.linear_dq8ca_q4gsw.default" && dq8ca_takes_gemv_norm(en, c, y);
  };
  if (const GatedPair pair = find_gated_pair(e, out, norm, takes); pair.up)
    return dispatch_linear_group(e, dq8ca_rowq(e), out, src, k, norm, {{&e.call(), pair.result}, {pair.up}},
                                 true, kGatedPairCalls, buffers, push);
  const std::vector<SiblingLinear> sibs = find_sibling_linears(e, out, k, norm, takes, 3);
  return sibs.size() >= 2 && dispatch_linear_group(e, dq8ca_rowq(e), out, src, k, norm, sibs, false,
                                                   sibling_calls_after(e, sibs), buffers, push);
}

// et_vk.linear_dq8ca_q4gsw(input, input_scale, input_zero_point, weights, weight_sums, weight_scales,
// group_size, bias?): weight_sums serve ExecuTorch's integer formulation; these kernels dequantize,
// or (the _dot variants) take the nibble sums from the weights they read.
// With an RMSNorm left to it (rms_norm), `input` is the norm's output and the _norm variant reads
// the norm's input.
void linear_dq8ca(Encoder& e) {
  GpuTensor& out = e.out();
  const Encoder::PendingNorm* norm = e.pending_norm(e.id(0));
  GpuTensor& in = norm ? e.tensor_id(norm->x) : e.tensor(0);
  GpuTensor& xs = e.tensor(1);
  GpuTensor& xz = e.tensor(2);
  e.require_rep(in, out, "the input", true);
  e.require_rep(xs, out, "the input scale", true);
  if (xz.texture != out.texture || xz.dtype != ir::DType::Int32) e.fail("the input zero point must be i32 in the output's storage");
  if (out.texture && out.packed_dim != 0) e.fail("textures must be width-packed");
  const int64_t n = out.dims.back(), k = in.dims.back();
  const int64_t row_bytes = (k + 7) / 8 * 4;
  const VkBuffer weight = e.raw(3, ir::DType::UInt8, n * row_bytes);
  const int32_t group = static_cast<int32_t>(e.int_arg(6));
  const auto [scales, stride] = q4_scales(e, 5, n, k, group);
  const bool has_bias = !e.is_null(7);
  const VkBuffer bias = has_bias ? e.raw(7, ir::DType::Float32, n) : e.filled(1, 0, ir::DType::Float32);
  const bool gemv = dq8ca_gemv(out, k, group, e.cpu_device());
  const auto rowq = e.row_quantized_in_linear.find(e.id(1));
  const bool own_params = rowq != e.row_quantized_in_linear.end();
  if (own_params && !gemv) e.fail("the input's scale was left to matrix-vector linears, but this one is not");
  if (norm && !own_params) e.fail("an RMSNorm was left to 8da4w linears that compute their rows' parameters, but this one does not");
  if (own_params && dq8ca_linear_group(e, out, in, k, group, rowq->second, norm)) return;
  const bool split_k = !gemv && use_split_k(out, k, false);
  int32_t split = 0, op = 0;
  GpuTensor* other = nullptr;
  GpuTensor* fused = gemv ? gemv_epilogue(e, out, in, other, op) : nullptr;
  GpuTensor& target = fused ? *fused : gemv ? gemv_output(e, out, split) : out;
  const std::string name = fmt::format("{}{}{}", own_params ? dq8ca_rowq(e)
                                                : gemv       ? "linear_dq8ca_q4_gemv"
                                                : split_k    ? "linear_dq8ca_q4_splitk"
                                                             : "linear_dq8ca_q4",
                                       fused ? "_ep" : "", norm ? "_norm" : "");
  const auto& v = e.variant(out, {}, gemv ? gemv_width(e, out, name, k) : name);
  Push p(v);
  p.iv("out_sizes", out.sizes).i("k", static_cast<int32_t>(k)).i("group", group).i("scales_stride", stride);
  p.i("has_bias", has_bias ? 1 : 0);
  if (gemv) p.i("out_split", split).i("epilogue_op", op);
  if (own_params) p.f("eps", rowq->second);
  if (norm) p.f("norm_eps", norm->eps);
  std::vector<Resource> res{target.resource(),     in.resource(),         {weight, VK_NULL_HANDLE},
                            {scales, VK_NULL_HANDLE}, {bias, VK_NULL_HANDLE}, xs.resource(), xz.resource()};
  if (fused) res.push_back(other->resource());
  if (norm) res.push_back({norm->gamma, VK_NULL_HANDLE});
  e.dispatch(v, std::move(res),
             p, gemv ? gemv_items(out, v) : split_k ? out.items() * v.local_size[0] : out.items());
}

// et_vk.embedding_q4gsw(weight [V, pad8(D) / 2] uint8, weight_scales [V, D / group], group_size,
// indices, is_linear_weight=True).
void embedding_q4(Encoder& e) {
  GpuTensor& out = e.out();
  GpuTensor& idx = e.tensor(3);
  if (!e.bool_arg(4)) e.fail("only linear-weight packing (is_linear_weight=True) is supported");
  if (idx.texture != out.texture || idx.dtype != ir::DType::Int32) e.fail("the indices must be i32 in the output's storage");
  const int64_t d = out.dims.back(), group = e.int_arg(2);
  const GpuTensor& table = e.constant(0, ir::DType::UInt8);
  const GpuTensor& scales = e.constant(1, ir::DType::Float32);
  if (table.dims.size() != 2 || scales.dims.size() != 2 || group <= 0 || d % group != 0 ||
      scales.dims[1] * group != d || table.dims[1] * 2 < d || (table.dims[0] * table.dims[1]) % 4 != 0)
    e.fail("the table, scales and group do not fit the output");
  if (out.dims.size() > 4 || idx.dims.size() > 3) e.fail("the output has rank > 4");
  const auto& v = e.variant(out);
  Push p(v);
  p.iv("out_sizes", out.sizes).iv("idx_sizes", idx.sizes).iv("packed_dims", {out.packed_dim, idx.packed_dim, 0, 0});
  p.i("rows", static_cast<int32_t>(table.dims[0])).i("group", static_cast<int32_t>(group));
  e.dispatch(v, {out.resource(), idx.resource(), {table.buffer.buffer, VK_NULL_HANDLE}, {scales.buffer.buffer, VK_NULL_HANDLE}},
             p, out.items());
}

}  // namespace

void add_quant_ops(std::unordered_map<std::string, OpEncoder>& t) {
  t["aten._weight_int8pack_mm.default"] = quantized_linear;
  t["et_vk.linear_q4gsw.default"] = quantized_linear;
  t["torchao.choose_qparams_affine.default"] = choose_qparams;
  t["et_vk.linear_dq8ca_q4gsw.default"] = linear_dq8ca;
  t["et_vk.embedding_q4gsw.default"] = embedding_q4;
}

}  // namespace vkc::runtime::vk
