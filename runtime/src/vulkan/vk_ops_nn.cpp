// Convolution, pooling, linear/matmul, batch and layer norm, upsampling and grid sampling
// (conv2d.glsl, pool.glsl, linear.glsl, matmul.glsl, batch_norm.glsl, layer_norm.glsl,
// upsample.glsl, grid_sample.glsl), and the operator table.
#include <fmt/format.h>

#include <optional>

#include <cfloat>
#include <cstring>
#include <utility>

#include "vk_encoder.h"

namespace vkc::runtime::vk {
namespace {

// A 2-element int list ([a] repeats; [] gives `dflt`).
std::array<int32_t, 2> pair(Encoder& e, size_t i, std::array<int32_t, 2> dflt) {
  const std::vector<int64_t> l = e.int_list(i);
  if (l.empty()) return dflt;
  if (l.size() == 1) return {static_cast<int32_t>(l[0]), static_cast<int32_t>(l[0])};
  if (l.size() != 2) e.fail(fmt::format("argument {} has {} values, expected 2", i, l.size()));
  return {static_cast<int32_t>(l[0]), static_cast<int32_t>(l[1])};
}

void require_rank4(Encoder& e, const GpuTensor& t, const char* what) {
  if (t.dims.size() != 4) e.fail(fmt::format("{} has rank {}; only 2-D (rank-4) tensors are supported", what, t.dims.size()));
}

// Weights [C_out, C_in/g, K_h, K_w] (1-D: [C_out, C_in/g, K_w]) as conv2d_tiled reads them: [oc4][ic4][K_h][K_w][ic lane][oc lane],
// zeros past C_out and C_in/g.
std::vector<uint8_t> pack_conv(const kernels::HostTensor& w, bool transposed) {
  const int64_t co = w.shape[transposed ? 1 : 0], ci = w.shape[transposed ? 0 : 1];
  const int64_t kh = w.shape.size() == 4 ? w.shape[2] : 1, kw = w.shape.back();
  const int64_t co4 = (co + 3) / 4, ci4 = (ci + 3) / 4;
  const size_t es = ir::dtype_size(w.dtype);
  std::vector<uint8_t> out(static_cast<size_t>(co4 * ci4 * kh * kw * 16) * es, 0);
  const uint8_t* src = w.data.data();
  for (int64_t o = 0; o < co; ++o)
    for (int64_t i = 0; i < ci; ++i)
      for (int64_t y = 0; y < kh; ++y)
        for (int64_t x = 0; x < kw; ++x) {
          const int64_t from = ((transposed ? i * co + o : o * ci + i) * kh + y) * kw + x;
          const int64_t to = ((((o / 4) * ci4 + i / 4) * kh + y) * kw + x) * 16 + (i % 4) * 4 + o % 4;
          std::memcpy(out.data() + to * es, src + from * es, es);
        }
  return out;
}

std::vector<uint8_t> pack_conv_tiled(const kernels::HostTensor& w) { return pack_conv(w, false); }
// Transposed weights [C_in, C_out, K_h, K_w] into the same layout.
std::vector<uint8_t> pack_conv_transpose_tiled(const kernels::HostTensor& w) { return pack_conv(w, true); }

// Depthwise weights [C, 1, K_h, K_w] as conv2d_dw reads them: [c4][K_h][K_w][c lane], zeros past C.
std::vector<uint8_t> pack_conv_dw(const kernels::HostTensor& w) {
  const int64_t c = w.shape[0], kh = w.shape.size() == 4 ? w.shape[2] : 1, kw = w.shape.back();
  const size_t es = ir::dtype_size(w.dtype);
  std::vector<uint8_t> out(static_cast<size_t>((c + 3) / 4 * kh * kw * 4) * es, 0);
  for (int64_t ch = 0; ch < c; ++ch)
    for (int64_t k = 0; k < kh * kw; ++k)
      std::memcpy(out.data() + (((ch / 4) * kh * kw + k) * 4 + ch % 4) * es, w.data.data() + (ch * kh * kw + k) * es, es);
  return out;
}

// 2-D convolution; a 1-D one ([N, C, L], weight [O, C/g, K]) runs as a 2-D one of height 1
// between views into scratch tensors. Kernels: conv2d_dw (depthwise), conv2d_tiled (groups of
// whole texels; conv2d_splitk for few tiles and many taps on a GPU; conv2d_pw for 1x1),
// conv_transpose2d_tiled (transposed, groups == 1), else conv2d.glsl (any groups).
void convolution(Encoder& e) {
  GpuTensor& out3 = e.out();
  GpuTensor& in3 = e.tensor(0);
  const bool one_d = in3.dims.size() == 3;
  if (one_d && out3.dims.size() != 3) e.fail("a 1-D convolution's output must have rank 3");
  GpuTensor& in = one_d ? e.scratch({in3.dims[0], in3.dims[1], 1, in3.dims[2]}, in3) : in3;
  GpuTensor& out = one_d ? e.scratch({out3.dims[0], out3.dims[1], 1, out3.dims[2]}, out3) : out3;
  require_rank4(e, in, "the input");
  e.require_rep(in, out, "the input", true);
  if (one_d) encode_view(e, in, in3);
  std::vector<int64_t> wdims(e.vk_tensor(e.id(1)).dims.begin(), e.vk_tensor(e.id(1)).dims.end());
  if (one_d && wdims.size() == 3) wdims.insert(wdims.begin() + 2, 1);
  if (wdims.size() != 4) e.fail("the weight must be [C_out, C_in/groups, K_h, K_w] (or [C_out, C_in/groups, K])");
  const bool transposed = e.bool_arg(6);
  const int32_t groups = static_cast<int32_t>(e.int_arg(8));
  auto one_d_pair = [&](size_t i, int32_t dflt) {
    const std::vector<int64_t> l = e.int_list(i);
    if (l.size() > 1) e.fail(fmt::format("argument {} has {} values, expected 1", i, l.size()));
    return std::array<int32_t, 2>{i == 4 ? 0 : 1, l.empty() ? dflt : static_cast<int32_t>(l[0])};
  };
  const auto stride = one_d ? one_d_pair(3, 1) : pair(e, 3, {1, 1});
  const auto pad = one_d ? one_d_pair(4, 0) : pair(e, 4, {0, 0});
  const auto dil = one_d ? one_d_pair(5, 1) : pair(e, 5, {1, 1});
  const bool clamped = e.op() == "et_vk.conv_with_clamp.default";
  const float lo = clamped ? static_cast<float>(e.opt_scalar(9).value_or(-FLT_MAX)) : -FLT_MAX;
  const float hi = clamped ? static_cast<float>(e.opt_scalar(10).value_or(FLT_MAX)) : FLT_MAX;
  const int64_t c_out = out.dims[1], c_in = in.dims[1];
  const bool depthwise = !transposed && groups == c_in && groups == c_out && wdims[1] == 1;
  const bool tiled = !transposed && !depthwise &&
                     (groups == 1 || ((c_in / groups) % 4 == 0 && (c_out / groups) % 4 == 0));
  const bool tiled_t = transposed && groups == 1;
  // Few output tiles and many taps: a workgroup per output texel splits the taps (GPUs only).
  const int64_t taps = (wdims[1] + 3) / 4 * wdims[2] * wdims[3];
  const int64_t tiles = (out.sizes[0] + 3) / 4 * out.sizes[1] * ((out.sizes[2] + 3) / 4) * out.sizes[3];
  const bool split = tiled && !e.cpu_device() && tiles < 16384 && taps >= 16;
  const bool pointwise = tiled && !split && groups == 1 && wdims[2] == 1 && wdims[3] == 1 && stride[0] == 1 &&
                         stride[1] == 1 && pad[0] == 0 && pad[1] == 0;
  const bool has_bias = !e.is_null(2);
  const VkBuffer bias = has_bias ? e.raw(2, out.dtype, c_out) : e.filled(1, 0, out.dtype);
  const VkBuffer weight = depthwise ? e.packed(1, out.dtype, "conv2d_dw", pack_conv_dw)
                          : tiled   ? e.packed(1, out.dtype, "conv2d_tiled", pack_conv_tiled)
                          : tiled_t ? e.packed(1, out.dtype, "conv_transpose2d_tiled", pack_conv_transpose_tiled)
                                    : e.raw(1, out.dtype);
  const auto& v = e.variant(out, {}, depthwise ? "conv2d_dw"
                                     : split   ? "conv2d_splitk"
                                     : pointwise ? "conv2d_pw"
                                     : tiled   ? "conv2d_tiled"
                                     : tiled_t ? "conv_transpose2d_tiled"
                                     : transposed ? "conv_transpose2d" : "conv2d");
  Push p(v);
  p.iv("out_sizes", out.sizes).iv("in_sizes", in.sizes);
  p.iv("kernel_stride", {static_cast<int32_t>(wdims[3]), static_cast<int32_t>(wdims[2]), stride[1], stride[0]});
  p.iv("pad_dilation", {pad[1], pad[0], dil[1], dil[0]});
  p.i("groups", groups).i("has_bias", has_bias ? 1 : 0).f("out_min", lo).f("out_max", hi);
  // The tiled kernels compute 4 output texels along W per invocation; split-K a workgroup per texel.
  const int64_t items = split       ? out.items() * v.local_size[0]
                        : pointwise ? (out.sizes[0] + 3) / 4 * out.sizes[1] * ((out.sizes[2] + 7) / 8) * out.sizes[3]
                        : depthwise || tiled ? tiles
                                             : out.items();
  e.dispatch(v, {out.resource(), in.resource(), {weight, VK_NULL_HANDLE}, {bias, VK_NULL_HANDLE}}, p, items);
  if (one_d) encode_view(e, out3, out);
}

void max_pool2d(Encoder& e) {
  const std::vector<int32_t> outs = e.value_list(e.num_args() - 1);
  if (outs.size() != 2) e.fail("expected (values, indices) outputs");
  e.require_unused(outs[1], "the indices output");
  GpuTensor& out = e.tensor_id(outs[0]);
  GpuTensor& in = e.tensor(0);
  require_rank4(e, in, "the input");
  e.require_rep(in, out, "the input", true);
  const auto k = pair(e, 1, {1, 1}), s = pair(e, 2, k), pad = pair(e, 3, {0, 0}), dil = pair(e, 4, {1, 1});
  const auto& v = e.variant(out);
  Push p(v);
  p.iv("out_sizes", out.sizes).iv("in_sizes", in.sizes).iv("kernel_stride", {k[1], k[0], s[1], s[0]});
  p.iv("pad_dilation", {pad[1], pad[0], dil[1], dil[0]}).i("count_include_pad", 0).i("divisor_override", 0);
  e.dispatch(v, {out.resource(), in.resource()}, p, out.items());
}

void avg_pool2d(Encoder& e) {
  GpuTensor& out = e.out();
  GpuTensor& in = e.tensor(0);
  require_rank4(e, in, "the input");
  e.require_rep(in, out, "the input", true);
  const auto k = pair(e, 1, {1, 1}), s = pair(e, 2, k), pad = pair(e, 3, {0, 0});
  const auto& v = e.variant(out);
  Push p(v);
  p.iv("out_sizes", out.sizes).iv("in_sizes", in.sizes).iv("kernel_stride", {k[1], k[0], s[1], s[0]});
  p.iv("pad_dilation", {pad[1], pad[0], 1, 1}).i("count_include_pad", e.bool_arg(5) ? 1 : 0);
  p.i("divisor_override", static_cast<int32_t>(e.opt_int(6).value_or(0)));
  e.dispatch(v, {out.resource(), in.resource()}, p, out.items());
}

// Linear weights as linear_tiled reads them: [N / 4][K] -> vec4 over 4 outputs, zeros past N;
// from [N, K] (linear) or [K, N] (addmm).
std::vector<uint8_t> pack_linear(const kernels::HostTensor& w, bool kn) {
  if (w.shape.size() != 2) return {};
  const int64_t n = w.shape[kn ? 1 : 0], k = w.shape[kn ? 0 : 1];
  const size_t es = ir::dtype_size(w.dtype);
  std::vector<uint8_t> out(static_cast<size_t>((n + 3) / 4 * k * 4) * es, 0);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < k; ++j)
      std::memcpy(out.data() + (((i / 4) * k + j) * 4 + i % 4) * es, w.data.data() + (kn ? j * n + i : i * k + j) * es, es);
  return out;
}
std::vector<uint8_t> pack_linear_nk(const kernels::HostTensor& w) { return pack_linear(w, false); }
std::vector<uint8_t> pack_linear_kn(const kernels::HostTensor& w) { return pack_linear(w, true); }

}  // namespace

bool fp_linear_takes_gemv_norm(Encoder& e, const serializer::VkOperatorCall& c, int32_t y) {
  if (c.name != "aten.linear.default" || c.args.size() < 3 || c.args[0] != y) return false;
  for (size_t i = 1; i < c.args.size(); ++i)
    if (c.args[i] == y) return false;
  const auto* w = std::get_if<serializer::VkTensor>(&e.graph()->values.at(static_cast<size_t>(c.args[1])));
  const auto* x = std::get_if<serializer::VkTensor>(&e.graph()->values.at(static_cast<size_t>(y)));
  if (!w || !x || w->dims.size() != 2 || x->dims.empty()) return false;
  const GpuTensor& out = e.tensor_id(c.args.back());
  return use_gemv(out, x->dims.back(), out.dtype == ir::DType::Float16 ? 8 : 4, e.cpu_device());
}

namespace {

// The fp matrix-vector kernels' family: the _sg variants where subgroups add the partial sums.
std::string fp_gemv(const Encoder& e) { return e.subgroup_arithmetic() ? "linear_gemv_sg" : "linear_gemv"; }

// An MLP's gate and up projections with SiLU(gate) * up (find_gated_pair), or Q, K and V (sibling
// linears, find_sibling_linears), in one dispatch: linear_gemv_dual / _multi (+ _norm).
bool linear_group(Encoder& e, GpuTensor& out, GpuTensor& src, int64_t k, const Encoder::PendingNorm* norm) {
  const auto buffers = [&](const serializer::VkOperatorCall& c, int64_t n) -> std::optional<LinearBuffers> {
    const bool has_bias = c.args.size() > 3 && !std::holds_alternative<serializer::VkNull>(
                                                   e.graph()->values.at(static_cast<size_t>(c.args[2])));
    return LinearBuffers{{e.raw_value(c.args[1], out.dtype, n * k),
                          has_bias ? e.raw_value(c.args[2], out.dtype, n) : e.filled(1, 0, out.dtype)},
                         has_bias};
  };
  const auto push = [](Push& p, const ivec4&) { p.i("weight_kn", 0).f("alpha", 1.0f).f("beta", 1.0f); };
  if (const GatedPair pair = find_gated_pair(e, out, norm, fp_linear_takes_gemv_norm); pair.up)
    return dispatch_linear_group(e, fp_gemv(e), out, src, k, norm, {{&e.call(), pair.result}, {pair.up}}, true,
                                 kGatedPairCalls, buffers, push);
  const std::vector<SiblingLinear> sibs = find_sibling_linears(e, out, k, norm, fp_linear_takes_gemv_norm);
  return sibs.size() >= 2 &&
         dispatch_linear_group(e, fp_gemv(e), out, src, k, norm, sibs, false, sibling_calls_after(e, sibs), buffers, push);
}

// linear(input, weight [N, K], bias?) and addmm(self = bias, mat1, mat2 = weight [K, N]).
void linear(Encoder& e) {
  if (encode_linear_coopmat(e)) return;
  GpuTensor& out = e.out();
  const bool addmm = e.op() == "aten.addmm.default";
  const size_t in_arg = addmm ? 1 : 0, w_arg = addmm ? 2 : 1, b_arg = addmm ? 0 : 2;
  GpuTensor& in = e.tensor(in_arg);
  e.require_rep(in, out, "the input", true);
  const int64_t n = out.dims.back(), k = in.dims.back();
  // An RMSNorm left to this linear (rms_norm): the _norm variant reads the norm's input.
  const Encoder::PendingNorm* norm = addmm ? nullptr : e.pending_norm(e.id(in_arg));
  const bool has_bias = !e.is_null(b_arg);
  const VkBuffer bias = has_bias ? e.raw(b_arg, out.dtype, n) : e.filled(1, 0, out.dtype);
  // Few outputs and a long K (a vector times a matrix): a workgroup per output splits K
  // (linear_splitk.glsl); otherwise 4 rows x 4 outputs per invocation (linear_tiled.glsl) from
  // weights packed at load.
  // One or a few rows on a GPU (decoding): a workgroup per 4 outputs reads the weights 16 bytes at
  // a time (linear_gemv.glsl), when W is [N, K] and K a whole number of chunks.
  const bool two_d = e.vk_tensor(e.id(w_arg)).dims.size() == 2;
  const bool gemv = !addmm && two_d && use_gemv(out, k, out.dtype == ir::DType::Float16 ? 8 : 4, e.cpu_device());
  const bool split_k = !gemv && use_split_k(out, k, e.cpu_device());
  const bool tiled = !gemv && !split_k && two_d;
  const VkBuffer weight = tiled ? e.packed(w_arg, out.dtype, addmm ? "linear_kn" : "linear_nk",
                                           addmm ? pack_linear_kn : pack_linear_nk)
                                : e.raw(w_arg, out.dtype, n * k);
  // Tiles of 4 rows; on a GPU one row when that still makes few invocations (small encoders: each
  // invocation's K loop is the latency, and more of them fill more of the GPU).
  const int64_t n4 = (n + 3) / 4;
  const int64_t rows = out.texture ? static_cast<int64_t>(out.sizes[1]) : static_cast<int64_t>(out.sizes[1]) * out.sizes[2] * out.sizes[3];
  const int64_t planes = out.texture ? static_cast<int64_t>(out.sizes[2]) * out.sizes[3] : 1;
  const bool one_row = tiled && !e.cpu_device() && n4 * ((rows + 3) / 4) * planes < 8192;
  const int64_t tile_rows = one_row ? 1 : 4;
  // A matrix-vector linear also runs the add or mul that alone reads its output (gemv_epilogue), or
  // writes the view that alone reads it (gemv_output).
  if (norm && !gemv) e.fail("an RMSNorm was left to matrix-vector linears, but this one is not");
  GpuTensor& src = norm ? e.tensor_id(norm->x) : in;
  if (gemv && two_d && linear_group(e, out, src, k, norm)) return;
  int32_t split = 0, op = 0;
  GpuTensor* other = nullptr;
  GpuTensor* fused = gemv ? gemv_epilogue(e, out, src, other, op) : nullptr;
  GpuTensor& target = fused ? *fused : gemv ? gemv_output(e, out, split) : out;
  const std::string name = fused     ? fp_gemv(e) + "_ep"
                           : gemv    ? fp_gemv(e)
                           : split_k ? "linear_splitk"
                           : one_row ? "linear_tiled_r1"
                           : tiled   ? "linear_tiled"
                                     : "linear";
  const std::string full = norm ? name + "_norm" : name;
  const auto& v = e.variant(out, {}, gemv ? gemv_width(e, out, full, k) : full);
  Push p(v);
  p.iv("out_sizes", out.sizes).i("k", static_cast<int32_t>(k)).i("weight_kn", addmm ? 1 : 0);
  p.i("has_bias", has_bias ? 1 : 0);
  p.f("alpha", addmm ? static_cast<float>(e.scalar_arg(4)) : 1.0f).f("beta", addmm ? static_cast<float>(e.scalar_arg(3)) : 1.0f);
  if (gemv) p.i("out_split", split).i("epilogue_op", op);
  if (norm) p.f("norm_eps", norm->eps);
  int64_t items = split_k ? out.items() * v.local_size[0] : out.items();
  if (tiled) items = n4 * ((rows + tile_rows - 1) / tile_rows) * planes;
  if (gemv) items = gemv_items(out, v);
  std::vector<Resource> res{target.resource(), src.resource(), {weight, VK_NULL_HANDLE}, {bias, VK_NULL_HANDLE}};
  if (fused) res.push_back(other->resource());
  if (norm) res.push_back({norm->gamma, VK_NULL_HANDLE});
  e.dispatch(v, std::move(res), p, items);
}

void matmul(Encoder& e) {
  GpuTensor& out = e.out();
  GpuTensor& a = e.tensor(0, &out);
  GpuTensor& b = e.tensor(1, &out);
  e.require_rep(a, out, "self", true);
  e.require_rep(b, out, "mat2", true);
  const auto& v = e.variant(out);
  Push p(v);
  p.iv("out_sizes", out.sizes).iv("mat1_sizes", a.sizes).iv("mat2_sizes", b.sizes);
  e.dispatch(v, {out.resource(), a.resource(), b.resource()}, p, out.items());
}

// The normalized output of a norm whose outputs are (out, mean, rstd): mean and rstd are not
// computed, so they must be unused.
GpuTensor& normalized_output(Encoder& e) {
  const std::vector<int32_t> outs = e.value_list(e.num_args() - 1);
  for (size_t k = 1; k < outs.size(); ++k) e.require_unused(outs[k], "a mean/rstd output");
  return e.tensor_id(outs.at(0));
}

// Arguments i (weight) and i + 1 (bias) of a norm as buffers of n elements: ones / zeros when absent.
std::pair<VkBuffer, VkBuffer> weight_and_bias(Encoder& e, size_t i, int64_t n, ir::DType dt) {
  return {e.is_null(i) ? e.filled(n, 1, dt) : e.raw(i, dt, n),
          e.is_null(i + 1) ? e.filled(n, 0, dt) : e.raw(i + 1, dt, n)};
}

void batch_norm(Encoder& e) {
  GpuTensor& out = normalized_output(e);
  GpuTensor& in = e.tensor(0);
  e.require_rep(in, out, "the input", true);
  if (in.dims.size() < 2) e.fail("the input needs a channel dim");
  const int64_t c = in.dims[1];
  const ir::DType dt = out.dtype;
  const auto [w, b] = weight_and_bias(e, 1, c, dt);
  const auto& v = e.variant(out);
  Push p(v);
  p.iv("sizes", out.sizes).f("eps", static_cast<float>(e.scalar_arg(6)));
  e.dispatch(v, {out.resource(), in.resource(), {w, VK_NULL_HANDLE}, {b, VK_NULL_HANDLE},
                 {e.raw(3, dt, c), VK_NULL_HANDLE}, {e.raw(4, dt, c), VK_NULL_HANDLE}},
             p, out.items());
}

// native_group_norm(input, weight?, bias?, N, C, HxW, group, eps) -> (out, mean, rstd): the
// per-(batch, group) statistics into a scratch buffer (group_norm_stats.glsl), then the
// normalization (group_norm.glsl); mean and rstd must be unused.
void group_norm(Encoder& e) {
  GpuTensor& out = normalized_output(e);
  GpuTensor& in = e.tensor(0);
  e.require_rep(in, out, "the input", true);
  require_rank4(e, in, "the input");
  const int64_t c = in.dims[1], groups = e.int_arg(6);
  if (groups <= 0 || c % groups != 0) e.fail(fmt::format("{} channels do not split into {} groups", c, groups));
  const auto [w, b] = weight_and_bias(e, 1, c, out.dtype);
  GpuTensor proto;
  proto.dtype = ir::DType::Float32;
  GpuTensor& stats = e.scratch({in.dims[0] * groups * 2}, proto);
  const auto& sv = e.variant(out, {}, "group_norm_stats");
  Push sp(sv);
  sp.iv("in_sizes", in.sizes).i("packed_dim", in.packed_dim).i("groups", static_cast<int32_t>(groups));
  sp.f("eps", static_cast<float>(e.scalar_arg(7)));
  e.dispatch(sv, {stats.resource(), in.resource()}, sp, in.dims[0] * groups * std::max<int64_t>(1, sv.local_size[0]));
  const auto& v = e.variant(out, {}, "group_norm");
  Push p(v);
  p.iv("sizes", out.sizes).i("packed_dim", out.packed_dim).i("groups", static_cast<int32_t>(groups));
  e.dispatch(v, {out.resource(), in.resource(), {w, VK_NULL_HANDLE}, {b, VK_NULL_HANDLE}, stats.resource()}, p,
             out.items());
}

// native_layer_norm(input, normalized_shape, weight, bias, eps) -> (out, mean, rstd), over
// the last dim only; mean and rstd must be unused.
void layer_norm(Encoder& e) {
  GpuTensor& out = normalized_output(e);
  GpuTensor& in = e.tensor(0);
  e.require_rep(in, out, "the input", false);
  const auto shape = e.opt_int_list(1);
  if (!shape || shape->size() != 1 || in.dims.empty() || shape->at(0) != in.dims.back())
    e.fail("only normalization over the last dim is supported");
  const int64_t w = in.dims.back();
  const ir::DType dt = out.dtype;
  const auto [weight, bias] = weight_and_bias(e, 2, w, dt);
  // Long rows (on a GPU, any but the shortest): a workgroup per row unit (layer_norm_wg.glsl)
  // instead of one invocation.
  const bool wide = w >= 256 || (w >= 32 && !e.cpu_device());
  // Rows of 1024 or more on a GPU: 256 invocations a row (layer_norm_wg256).
  const auto& v = e.variant(out, {}, !wide ? "layer_norm" : w >= 1024 && !e.cpu_device() ? "layer_norm_wg256" : "layer_norm_wg");
  Push p(v);
  p.iv("sizes", out.sizes).f("eps", static_cast<float>(e.scalar_arg(4))).i("packed_dim", out.packed_dim);
  ivec4 rows = out.sizes;
  rows[0] = 1;
  e.dispatch(v, {out.resource(), in.resource(), {weight, VK_NULL_HANDLE}, {bias, VK_NULL_HANDLE}}, p,
             out.items(rows) * (wide ? v.local_size[0] : 1));
}

void upsample(Encoder& e) {
  GpuTensor& out = e.out();
  GpuTensor& in = e.tensor(0);
  require_rank4(e, in, "the input");
  e.require_rep(in, out, "the input", true);
  const bool bilinear = e.op() == "aten.upsample_bilinear2d.vec";
  const bool align = bilinear && e.bool_arg(2);
  const auto factors = e.opt_double_list(bilinear ? 3 : 2);
  float sx, sy;
  if (align) {
    sx = out.sizes[0] > 1 ? float(in.sizes[0] - 1) / float(out.sizes[0] - 1) : 0.f;
    sy = out.sizes[1] > 1 ? float(in.sizes[1] - 1) / float(out.sizes[1] - 1) : 0.f;
  } else if (factors && factors->size() == 2) {  // PyTorch uses 1 / scale_factor when given
    sx = static_cast<float>(1.0 / (*factors)[1]);
    sy = static_cast<float>(1.0 / (*factors)[0]);
  } else {
    sx = float(in.sizes[0]) / float(out.sizes[0]);
    sy = float(in.sizes[1]) / float(out.sizes[1]);
  }
  const auto& v = e.variant(out);
  Push p(v);
  p.iv("out_sizes", out.sizes).iv("in_sizes", in.sizes).fv2("scale", sx, sy).i("align_corners", align ? 1 : 0);
  e.dispatch(v, {out.resource(), in.resource()}, p, out.items());
}

// grid_sampler_2d(input, grid, interpolation_mode, padding_mode, align_corners) (grid_sample.glsl).
void grid_sampler(Encoder& e) {
  GpuTensor& out = e.out();
  GpuTensor& in = e.tensor(0, &out);
  GpuTensor& grid = e.tensor(1, &out);
  require_rank4(e, in, "the input");
  require_rank4(e, grid, "the grid");
  e.require_rep(in, out, "the input", false);
  e.require_rep(grid, out, "the grid", false);
  const int64_t mode = e.int_arg(2), padding = e.int_arg(3);
  if (mode < 0 || mode > 1) e.fail("only bilinear (0) and nearest (1) interpolation are supported");
  if (padding < 0 || padding > 2) e.fail("padding_mode must be 0, 1 or 2");
  const auto& v = e.variant(out);
  Push p(v);
  p.iv("out_sizes", out.sizes).iv("in_sizes", in.sizes).iv("grid_sizes", grid.sizes);
  p.iv("packed_dims", {out.packed_dim, in.packed_dim, grid.packed_dim, 0});
  p.i("mode", static_cast<int32_t>(mode)).i("padding", static_cast<int32_t>(padding)).i("align_corners", e.bool_arg(4) ? 1 : 0);
  e.dispatch(v, {out.resource(), in.resource(), grid.resource()}, p, out.items());
}

}  // namespace

void add_nn_ops(std::unordered_map<std::string, OpEncoder>& t) {
  t["aten.convolution.default"] = convolution;
  t["et_vk.conv_with_clamp.default"] = convolution;
  t["aten.max_pool2d_with_indices.default"] = max_pool2d;
  t["aten.avg_pool2d.default"] = avg_pool2d;
  t["aten.linear.default"] = linear;
  t["aten.grid_sampler_2d.default"] = grid_sampler;
  t["aten.addmm.default"] = linear;
  t["aten.mm.default"] = matmul;
  t["aten.bmm.default"] = matmul;
  t["aten._native_batch_norm_legit_no_training.default"] = batch_norm;
  t["aten.native_layer_norm.default"] = layer_norm;
  t["aten.native_group_norm.default"] = group_norm;
  t["aten.upsample_nearest2d.vec"] = upsample;
  t["aten.upsample_bilinear2d.vec"] = upsample;
}

const std::unordered_map<std::string, OpEncoder>& vulkan_ops() {
  static const auto table = [] {
    std::unordered_map<std::string, OpEncoder> t;
    add_copy_ops(t);
    add_elementwise_ops(t);
    add_nn_ops(t);
    add_llm_ops(t);
    add_quant_ops(t);
    add_q8ta_ops(t);
    return t;
  }();
  return table;
}

}  // namespace vkc::runtime::vk
