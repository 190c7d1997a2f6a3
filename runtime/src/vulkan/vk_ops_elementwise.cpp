// Element-wise operators (binary.glsl, unary.glsl), softmax (softmax.glsl) and reductions
// (reduce.glsl).
#include <fmt/format.h>

#include <algorithm>
#include <cfloat>

#include "vk_encoder.h"

namespace vkc::runtime::vk {
namespace {

void binary(Encoder& e) {
  GpuTensor& out = e.out();
  GpuTensor& a = e.tensor(0, &out);
  GpuTensor& b = e.tensor(1, &out);
  e.require_rep(a, out, "self", false);
  e.require_rep(b, out, "other", false);
  const auto& v = e.variant(out);
  const bool has_alpha = e.op() == "aten.add.Tensor" || e.op() == "aten.sub.Tensor";
  Push p(v);
  p.iv("out_sizes", out.sizes).iv("in_sizes", a.sizes).iv("other_sizes", b.sizes);
  p.iv("packed_dims", {out.packed_dim, a.packed_dim, b.packed_dim, 0});
  p.f("alpha", has_alpha ? static_cast<float>(e.scalar_arg(2)) : 1.0f);
  e.dispatch(v, {out.resource(), a.resource(), b.resource()}, p, out.items());
}

// The `range` push constant of one-item-per-element/texel shaders: (numel, 0, 0, 0) for buffers,
// (extents.xyz, 0) for textures.
ivec4 item_range(const GpuTensor& out) {
  if (!out.texture) return {static_cast<int32_t>(out.items()), 0, 0, 0};
  ivec4 range = out.sizes;
  range[out.packed_dim] = (range[out.packed_dim] + 3) / 4;
  return {range[0], range[1], range[2] * range[3], 0};
}

void unary_with(Encoder& e, float a, float b, std::string_view name = {}) {
  GpuTensor& out = e.out();
  GpuTensor& in = e.tensor(0, &out);
  e.require_rep(in, out, "the input", true);
  if (in.sizes != out.sizes) e.fail("input and output sizes differ");
  const auto& v = e.variant(out, {}, name);
  Push p(v);
  p.iv("range", item_range(out)).f("a", a).f("b", b);
  e.dispatch(v, {out.resource(), in.resource()}, p, out.items());
}

// _to_copy: a cast between f32, f16 and i32 (to_copy.glsl's variant for the input dtype).
void to_copy(Encoder& e) {
  GpuTensor& out = e.out();
  GpuTensor& in = e.tensor(0);
  if (in.texture != out.texture || in.packed_dim != out.packed_dim)
    e.fail(fmt::format("the input is {} {} but the output is {} {}", in.storage(), in.layout(), out.storage(),
                       out.layout()));
  if (in.sizes != out.sizes) e.fail("input and output sizes differ");
  const auto& v = e.variant(out, {}, fmt::format("to_copy_from_{}", in.dtype_name()));
  Push p(v);
  p.iv("range", item_range(out));
  e.dispatch(v, {out.resource(), in.resource()}, p, out.items());
}

void unary(Encoder& e) { unary_with(e, 0, 0); }

void clamp(Encoder& e) {
  const double lo = e.opt_scalar(1).value_or(-FLT_MAX), hi = e.opt_scalar(2).value_or(FLT_MAX);
  unary_with(e, static_cast<float>(lo), static_cast<float>(hi));
}

void leaky_relu(Encoder& e) { unary_with(e, static_cast<float>(e.scalar_arg(1)), 0); }
void pow_scalar(Encoder& e) { unary_with(e, static_cast<float>(e.scalar_arg(1)), 0); }

void gelu(Encoder& e) {
  const std::string approx = e.string_arg(1);
  if (approx != "none" && approx != "tanh") e.fail(fmt::format("approximate='{}' is not supported", approx));
  unary_with(e, 0, 0, approx == "tanh" ? "gelu_tanh" : "gelu");
}

void softmax(Encoder& e) {
  GpuTensor& out = e.out();
  GpuTensor& in = e.tensor(0, &out);
  e.require_rep(in, out, "the input", true);
  if (e.bool_arg(2)) e.fail("half_to_float is not supported");
  const int dim = whcn_dim(e.int_arg(1), in.dims.size());
  if (dim < 0 || dim >= static_cast<int>(in.dims.size())) e.fail("dim is out of range");
  const auto& v = e.variant(out);
  Push p(v);
  p.iv("sizes", out.sizes).i("dim", dim).i("packed_dim", out.packed_dim);
  ivec4 rows = out.sizes;
  rows[dim] = 1;
  e.dispatch(v, {out.resource(), in.resource()}, p, out.items(rows));
}

void reduce(Encoder& e) {
  GpuTensor& out = e.out();
  GpuTensor& in = e.tensor(0, &out);
  e.require_rep(in, out, "the input", false);
  const size_t r = in.dims.size();
  std::vector<int64_t> dims;
  if (auto d = e.opt_int_list(1); d && !d->empty()) dims = *d;
  else for (size_t k = 0; k < r; ++k) dims.push_back(static_cast<int64_t>(k));
  const bool keepdim = e.bool_arg(2);
  if (e.num_args() > 4 && !e.is_null(3)) e.fail("a dtype argument is not supported");
  ivec4 sizes = in.sizes;
  int mask = 0;
  for (int64_t d : dims) {
    const int w = whcn_dim(d, r);
    if (w < 0 || w >= static_cast<int>(r)) e.fail(fmt::format("dim {} is out of range", d));
    mask |= 1 << w;
    sizes[w] = 1;
  }
  if (!keepdim && out.texture && out.dims.size() != r)
    e.fail("a texture output without keepdim is not supported (the registry allows buffers only)");
  const auto& v = e.variant(out);
  Push p(v);
  p.iv("out_sizes", sizes).iv("in_sizes", in.sizes).iv("packed_dims", {out.packed_dim, in.packed_dim, 0, 0});
  p.i("reduce_mask", mask);
  // One workgroup per output element / texel (reduce.glsl).
  e.dispatch(v, {out.resource(), in.resource()}, p, out.items(sizes) * std::max<int64_t>(1, v.local_size[0]));
}

}  // namespace

void add_elementwise_ops(std::unordered_map<std::string, OpEncoder>& t) {
  for (const char* op : {"aten.add.Tensor", "aten.sub.Tensor", "aten.mul.Tensor", "aten.div.Tensor",
                         "aten.minimum.default", "aten.pow.Tensor_Tensor"})
    t[op] = binary;
  for (const char* op : {"aten.relu.default", "aten.sigmoid.default", "aten.hardswish.default",
                         "aten.hardsigmoid.default", "aten.tanh.default", "aten.abs.default", "aten.neg.default",
                         "aten.sqrt.default", "aten.rsqrt.default", "aten.exp.default", "aten.log10.default",
                         "aten.sin.default", "aten.cos.default", "aten.round.default"})
    t[op] = unary;
  t["aten.clamp.default"] = clamp;
  t["aten.leaky_relu.default"] = leaky_relu;
  t["aten.pow.Tensor_Scalar"] = pow_scalar;
  t["aten.gelu.default"] = gelu;
  t["aten._softmax.default"] = softmax;
  t["aten._to_copy.default"] = to_copy;
  t["aten._log_softmax.default"] = softmax;
  for (const char* op : {"aten.mean.dim", "aten.sum.dim_IntList", "aten.amax.default", "aten.amin.default"})
    t[op] = reduce;
}

}  // namespace vkc::runtime::vk
