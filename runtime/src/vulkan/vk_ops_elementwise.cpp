// Element-wise operators (binary.glsl, unary.glsl), softmax (softmax.glsl) and reductions
// (reduce.glsl).
#include <fmt/format.h>

#include <cmath>

#include <algorithm>
#include <cfloat>
#include <optional>
#include <utility>
#include <variant>

#include "vk_encoder.h"

namespace vkc::runtime::vk {
namespace {

// A relu or clamp right after a float binary op, reading only its output: its bounds, for the
// binary dispatch to apply (the program keeps both operators; one dispatch runs them).
std::optional<std::pair<float, float>> fused_clamp(Encoder& e, const GpuTensor& out) {
  if (out.dtype == ir::DType::Int32) return std::nullopt;
  if (e.sole_next("aten.relu.default")) return std::pair{0.0f, FLT_MAX};
  const serializer::VkOperatorCall* c = e.sole_next("aten.clamp.default");
  if (!c || c->args.size() != 4) return std::nullopt;
  const auto bound = [&](int32_t id, float none) -> std::optional<float> {
    const auto& v = e.graph()->values.at(static_cast<size_t>(id));
    if (std::holds_alternative<serializer::VkNull>(v)) return none;
    if (const auto* d = std::get_if<double>(&v)) return static_cast<float>(*d);
    if (const auto* i = std::get_if<int64_t>(&v)) return static_cast<float>(*i);
    return std::nullopt;
  };
  const auto lo = bound(c->args[1], -FLT_MAX), hi = bound(c->args[2], FLT_MAX);
  if (!lo || !hi) return std::nullopt;
  return std::pair{*lo, *hi};
}

void binary(Encoder& e) {
  GpuTensor& a = e.tensor(0, &e.out());
  GpuTensor& b = e.tensor(1, &e.out());
  const auto clamped = fused_clamp(e, e.out());
  if (clamped) e.absorb_next();
  GpuTensor& out = clamped ? e.tensor_id(e.next_output()) : e.out();
  e.require_rep(a, out, "self", false);
  e.require_rep(b, out, "other", false);
  e.require_unbroadcast_high_rank(out, {&a, &b});
  if (clamped && out.sizes != e.out().sizes) e.fail("the fused relu / clamp changes the shape");
  const auto& v = e.variant(out);
  const bool has_alpha = e.op() == "aten.add.Tensor" || e.op() == "aten.sub.Tensor";
  Push p(v);
  p.iv("out_sizes", out.sizes).iv("in_sizes", a.sizes).iv("other_sizes", b.sizes);
  p.iv("packed_dims", {out.packed_dim, a.packed_dim, b.packed_dim, 0});
  p.f("alpha", has_alpha ? static_cast<float>(e.scalar_arg(2)) : 1.0f);
  p.i("clamped", clamped ? 1 : 0).f("lo", clamped ? clamped->first : 0.0f).f("hi", clamped ? clamped->second : 0.0f);
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

// sigmoid(x) whose only reader is mul(x, sigmoid(x)) (either order, same shape): one SiLU dispatch.
void sigmoid(Encoder& e) {
  const serializer::VkOperatorCall* m = e.sole_next("aten.mul.Tensor");
  const int32_t x = e.id(0), s = e.call().args.back();
  if (m && m->args.size() == 3 && ((m->args[0] == x && m->args[1] == s) || (m->args[0] == s && m->args[1] == x))) {
    GpuTensor& in = e.tensor(0);
    GpuTensor& out = e.tensor_id(m->args[2]);
    if (in.sizes == out.sizes && in.texture == out.texture && in.packed_dim == out.packed_dim && in.dtype == out.dtype) {
      e.absorb_next();
      const auto& v = e.variant(out, {}, "silu");
      Push p(v);
      p.iv("range", item_range(out)).f("a", 0).f("b", 0);
      e.dispatch(v, {out.resource(), in.resource()}, p, out.items());
      return;
    }
  }
  unary_with(e, 0, 0);
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
  // Long rows: a workgroup per row unit (softmax_wg.glsl) instead of one invocation.
  const bool wide = out.sizes[dim] >= 256;
  const bool log = e.op() == "aten._log_softmax.default";
  const auto& v = e.variant(out, {}, wide ? (log ? "log_softmax_wg" : "softmax_wg") : (log ? "log_softmax" : "softmax"));
  Push p(v);
  p.iv("sizes", out.sizes).i("dim", dim).i("packed_dim", out.packed_dim);
  ivec4 rows = out.sizes;
  rows[dim] = 1;
  e.dispatch(v, {out.resource(), in.resource()}, p, out.items(rows) * (wide ? v.local_size[0] : 1));
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
  // Short reductions (and, on a CPU device, all but long ones) take the 16-invocation workgroups:
  // a wide workgroup would idle most of its invocations and, on a CPU, pay a pass over all of them
  // per barrier of its tree (reduce.glsl).
  int64_t count = 1;
  for (int d = 0; d < 4; ++d)
    if (mask & (1 << d)) count *= in.sizes[d];
  static const std::unordered_map<std::string_view, const char*> kNames = {
      {"aten.mean.dim", "mean_wg16"}, {"aten.sum.dim_IntList", "sum_wg16"}, {"aten.amax.default", "amax_wg16"},
      {"aten.amin.default", "amin_wg16"}};
  const bool narrow = count <= 64 || (e.cpu_device() && count <= 4096);
  const auto& v = narrow ? e.variant(out, {}, kNames.at(e.op())) : e.variant(out);
  Push p(v);
  p.iv("out_sizes", sizes).iv("in_sizes", in.sizes).iv("packed_dims", {out.packed_dim, in.packed_dim, 0, 0});
  p.i("reduce_mask", mask);
  // One workgroup per output element / texel (reduce.glsl).
  e.dispatch(v, {out.resource(), in.resource()}, p, out.items(sizes) * std::max<int64_t>(1, v.local_size[0]));
}

// Operands of an op whose inputs share a dtype other than the output's: a constant one is
// materialized like the computed one.
std::pair<GpuTensor*, GpuTensor*> same_dtype_operands(Encoder& e, size_t i, size_t j) {
  if (e.is_constant(i) && e.is_constant(j)) e.fail("both operands are constants");
  if (e.is_constant(i)) {
    GpuTensor& b = e.tensor(j);
    return {&e.tensor(i, &b), &b};
  }
  GpuTensor& a = e.tensor(i);
  return {&a, &e.tensor(j, &a)};
}

void require_storage(Encoder& e, const GpuTensor& t, const GpuTensor& out, const char* what) {
  if (t.texture != out.texture)
    e.fail(fmt::format("{} is {} but the output is {}; no kernel mixes them", what, t.storage(), out.storage()));
}

// eq/lt/le/gt/ge.Tensor: a bool (i32 on the GPU) from two inputs of one dtype (compare.glsl).
void compare(Encoder& e) {
  GpuTensor& out = e.out();
  auto [a, b] = same_dtype_operands(e, 0, 1);
  require_storage(e, *a, out, "self");
  require_storage(e, *b, out, "other");
  if (a->dtype != b->dtype) e.fail(fmt::format("operands are {} and {}", a->dtype_name(), b->dtype_name()));
  e.require_unbroadcast_high_rank(out, {a, b});
  const std::string name = e.op().substr(5, 2);  // "aten.eq.Tensor" -> "eq"
  const auto& v = e.variant(out, {}, fmt::format("{}_from_{}", name, a->dtype_name()));
  Push p(v);
  p.iv("out_sizes", out.sizes).iv("in_sizes", a->sizes).iv("other_sizes", b->sizes);
  p.iv("packed_dims", {out.packed_dim, a->packed_dim, b->packed_dim, 0});
  e.dispatch(v, {out.resource(), a->resource(), b->resource()}, p, out.items());
}

// eq/ne/lt/le/gt/ge.Scalar: a bool (i32 on the GPU) from self against one number (compare_scalar.glsl).
void compare_scalar(Encoder& e) {
  GpuTensor& out = e.out();
  GpuTensor& in = e.tensor(0);
  require_storage(e, in, out, "self");
  if (in.sizes != out.sizes) e.fail("self and the output differ in shape");  // (0-d and [1] alike)
  if (in.texture && in.packed_dim != out.packed_dim) e.fail("self and the output are packed along different dims");
  const double number = e.scalar_arg(1);
  const std::string name = e.op().substr(5, 2);  // "aten.eq.Scalar" -> "eq"
  const auto& v = e.variant(out, {}, fmt::format("{}_scalar_from_{}", name, in.dtype_name()));
  Push p(v);
  p.iv("out_sizes", out.sizes).iv("packed_dims", {out.packed_dim, in.packed_dim, 0, 0});
  // An int32 input is compared with an int32 number, exactly (the lowering's form).
  if (in.dtype == ir::DType::Int32 && (number != std::floor(number) || std::fabs(number) > 2147483647.0))
    e.fail(fmt::format("an int32 input compared with {} (not an int32 number)", number));
  p.i("other_i", static_cast<int32_t>(in.dtype == ir::DType::Int32 ? number : 0)).f("other_f", static_cast<float>(number));
  e.dispatch(v, {out.resource(), in.resource()}, p, out.items());
}

// where.self(condition, self, other): the condition is a bool tensor (i32 on the GPU).
void where(Encoder& e) {
  GpuTensor& out = e.out();
  GpuTensor cond_like;  // a constant condition is materialized as i32 in the output's representation
  cond_like.dtype = ir::DType::Int32;
  cond_like.texture = out.texture;
  cond_like.packed_dim = out.packed_dim;
  GpuTensor& c = e.tensor(0, &cond_like);
  GpuTensor& a = e.tensor(1, &out);
  GpuTensor& b = e.tensor(2, &out);
  if (c.dtype != ir::DType::Int32) e.fail(fmt::format("the condition is {} on the GPU, i32 expected", c.dtype_name()));
  require_storage(e, c, out, "the condition");
  e.require_rep(a, out, "self", false);
  e.require_rep(b, out, "other", false);
  e.require_unbroadcast_high_rank(out, {&c, &a, &b});
  const auto& v = e.variant(out);
  Push p(v);
  p.iv("out_sizes", out.sizes).iv("cond_sizes", c.sizes).iv("self_sizes", a.sizes).iv("other_sizes", b.sizes);
  p.iv("packed_dims", {out.packed_dim, c.packed_dim, a.packed_dim, b.packed_dim});
  e.dispatch(v, {out.resource(), c.resource(), a.resource(), b.resource()}, p, out.items());
}

// argmax / argmin(self, dim?, keepdim) (arg_reduce.glsl): no dim reduces the flattened tensor.
void arg_reduce(Encoder& e) {
  GpuTensor& out = e.out();
  GpuTensor& in = e.tensor(0);
  require_storage(e, in, out, "the input");
  ivec4 in_sizes = in.sizes;
  int dim = 0;
  if (e.is_null(1)) {
    if (in.texture) e.fail("a reduction over all dims needs buffers");
    in_sizes = {static_cast<int32_t>(in.items()), 1, 1, 1};
  } else {
    dim = whcn_dim(e.int_arg(1), in.dims.size());
    if (dim < 0 || dim >= static_cast<int>(std::max<size_t>(in.dims.size(), 1))) e.fail("dim is out of range");
    if (out.texture && out.dims.size() != in.dims.size()) e.fail("a texture output needs keepdim");
  }
  ivec4 kept = in_sizes;
  kept[dim] = 1;
  const std::string name = e.op() == "aten.argmax.default" ? "argmax" : "argmin";
  const auto& v = e.variant(out, {}, fmt::format("{}_from_{}", name, in.dtype_name()));
  Push p(v);
  p.iv("kept_sizes", kept).iv("in_sizes", in_sizes).iv("packed_dims", {out.packed_dim, in.packed_dim, 0, 0}).i("dim", dim);
  int64_t items = 1;
  for (int d = 0; d < 4; ++d) items *= kept[d];
  e.dispatch(v, {out.resource(), in.resource()}, p, out.texture ? out.items() : items);
}

}  // namespace

void add_elementwise_ops(std::unordered_map<std::string, OpEncoder>& t) {
  for (const char* op : {"aten.add.Tensor", "aten.sub.Tensor", "aten.mul.Tensor", "aten.div.Tensor",
                         "aten.minimum.default", "aten.pow.Tensor_Tensor", "aten.logical_and.default",
                         "aten.logical_or.default"})
    t[op] = binary;
  for (const char* op : {"aten.eq.Tensor", "aten.lt.Tensor", "aten.le.Tensor", "aten.gt.Tensor", "aten.ge.Tensor"})
    t[op] = compare;
  for (const char* op : {"aten.eq.Scalar", "aten.ne.Scalar", "aten.lt.Scalar", "aten.le.Scalar", "aten.gt.Scalar", "aten.ge.Scalar"})
    t[op] = compare_scalar;
  t["aten.where.self"] = where;
  t["aten.argmax.default"] = arg_reduce;
  t["aten.argmin.default"] = arg_reduce;
  for (const char* op : {"aten.relu.default", "aten.sigmoid.default", "aten.hardswish.default",
                         "aten.hardsigmoid.default", "aten.tanh.default", "aten.abs.default", "aten.neg.default",
                         "aten.sqrt.default", "aten.rsqrt.default", "aten.exp.default", "aten.log10.default",
                         "aten.sin.default", "aten.cos.default", "aten.round.default",
                         "aten.bitwise_not.default"})
    t[op] = unary;
  t["aten.sigmoid.default"] = sigmoid;
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
