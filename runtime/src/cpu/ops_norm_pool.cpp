// Normalization, pooling, reductions, softmax and resizing.
#include <fmt/format.h>

#include "op_context.h"
#include "vkc/kernels/data_movement.h"
#include "vkc/kernels/norm.h"
#include "vkc/kernels/pool.h"
#include "vkc/kernels/softmax.h"
#include "vkc/kernels/upsample.h"

namespace vkc::runtime::cpu {
namespace {

// int[2] arguments: one value repeats; `fallback` fills an empty list (stride=[] means kernel).
void pair_of(const OpContext& c, size_t i, int64_t out[2], const int64_t fallback[2], const char* what) {
  const std::vector<int64_t> v = c.int_list(i);
  if (v.empty()) {
    out[0] = fallback[0];
    out[1] = fallback[1];
  } else if (v.size() == 1 || v.size() == 2) {
    out[0] = v[0];
    out[1] = v.back();
  } else {
    c.fail(fmt::format("{} has {} values, expected 1 or 2", what, v.size()));
  }
}

// kernel_size, stride (empty: the kernel) and padding, arguments 1-3 of both pools.
kernels::PoolParams pool_window(const OpContext& c) {
  kernels::PoolParams p;
  const int64_t none[2] = {0, 0};
  pair_of(c, 1, p.kernel, none, "kernel_size");
  pair_of(c, 2, p.stride, p.kernel, "stride");
  pair_of(c, 3, p.padding, none, "padding");
  return p;
}

// aten.max_pool2d_with_indices.default(self, kernel_size, stride, padding, dilation, ceil_mode) -> (values, indices)
void max_pool2d(const OpContext& c) {
  kernels::PoolParams p = pool_window(c);
  const int64_t one[2] = {1, 1};
  pair_of(c, 4, p.dilation, one, "dilation");
  p.ceil_mode = c.bool_arg(5);
  kernels::MaxPoolResult r = kernels::max_pool2d(c.tensor(0), p);
  c.set_outputs({std::move(r.values), std::move(r.indices)});
}

// aten.avg_pool2d.default(self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override?)
void avg_pool2d(const OpContext& c) {
  kernels::PoolParams p = pool_window(c);
  p.ceil_mode = c.bool_arg(4);
  c.set_output(kernels::avg_pool2d(c.tensor(0), p, c.bool_arg(5), c.opt_int(6)));
}

// aten._native_batch_norm_legit_no_training.default(input, weight?, bias?, mean, var, momentum, eps)
// -> (out, empty, empty): the runtime writes only the first output.
void batch_norm(const OpContext& c) {
  const HostTensor& x = c.tensor(0);
  c.float_arg(5);  // momentum: unused in inference, but must be a Double
  HostTensor out = kernels::batch_norm(x, c.opt_tensor(1), c.opt_tensor(2), c.tensor(3), c.tensor(4), c.float_arg(6));
  c.set_outputs({std::move(out), HostTensor::zeros(x.dtype, {0}), HostTensor::zeros(x.dtype, {0})});
}

// aten.native_layer_norm.default(input, normalized_shape, weight?, bias?, eps) -> (out, mean, rstd)
void layer_norm(const OpContext& c) {
  const HostTensor& x = c.tensor(0);
  const std::vector<int64_t> normalized = c.int_list(1);
  if (normalized.empty() || normalized.size() > x.shape.size() ||
      !std::equal(normalized.begin(), normalized.end(), x.shape.end() - normalized.size()))
    c.fail(fmt::format("normalized_shape [{}] is not the input's trailing dims", fmt::join(normalized, ",")));
  kernels::LayerNormResult r =
      kernels::layer_norm(x, normalized.size(), c.opt_tensor(2), c.opt_tensor(3), c.float_arg(4));
  c.set_outputs({std::move(r.out), std::move(r.mean), std::move(r.rstd)});
}

// aten.native_group_norm.default(input, weight?, bias?, N, C, HxW, group, eps) -> (out, mean, rstd)
void group_norm(const OpContext& c) {
  const HostTensor& x = c.tensor(0);
  const int64_t n = c.int_arg(3), ch = c.int_arg(4), hw = c.int_arg(5);
  if (x.shape.size() < 2 || x.shape[0] != n || x.shape[1] != ch || x.numel() != n * ch * hw)
    c.fail(fmt::format("N={} C={} HxW={} do not describe the input [{}]", n, ch, hw, fmt::join(x.shape, ",")));
  kernels::GroupNormResult r = kernels::group_norm(x, c.opt_tensor(1), c.opt_tensor(2), c.int_arg(6), c.float_arg(7));
  c.set_outputs({std::move(r.out), std::move(r.mean), std::move(r.rstd)});
}

// aten._softmax.default / aten._log_softmax.default(self, dim, half_to_float)
template <bool Log>
void softmax(const OpContext& c) {
  c.bool_arg(2);
  c.set_output(Log ? kernels::log_softmax(c.tensor(0), c.int_arg(1)) : kernels::softmax(c.tensor(0), c.int_arg(1)));
}

// mean.dim / sum.dim_IntList (self, dim?, keepdim, dtype=None); amax / amin (self, dim, keepdim).
// An empty or absent dim list reduces every dim.
template <kernels::ReduceOp Op, bool HasDtype>
void reduce(const OpContext& c) {
  if constexpr (HasDtype)
    if (!c.is_null(3)) c.fail("a dtype argument is not supported");
  const std::vector<int64_t> dims = c.opt_int_list(1).value_or(std::vector<int64_t>{});
  c.set_output(kernels::reduce(Op, c.tensor(0), dims, c.bool_arg(2)));
}

// argmax / argmin(self, dim?, keepdim): dim None flattens.
template <bool Max>
void arg_reduce(const OpContext& c) {
  const HostTensor& x = c.tensor(0);
  if (c.is_null(1)) {
    const HostTensor flat{x.dtype, {x.numel()}, x.data};
    c.set_output(kernels::arg_reduce(Max, flat, 0, false));
    return;
  }
  c.set_output(kernels::arg_reduce(Max, x, c.int_arg(1), c.bool_arg(2)));
}

// upsample_nearest2d.vec(input, output_size?, scale_factors?)
void upsample_nearest(const OpContext& c) {
  const HostTensor& x = c.tensor(0);
  c.set_output(kernels::upsample_nearest2d(x, kernels::upsample_target(x.shape, c.opt_int_list(1), c.opt_double_list(2))));
}

// upsample_bilinear2d.vec(input, output_size?, align_corners, scale_factors?)
void upsample_bilinear(const OpContext& c) {
  const HostTensor& x = c.tensor(0);
  const auto target = kernels::upsample_target(x.shape, c.opt_int_list(1), c.opt_double_list(3));
  c.set_output(kernels::upsample_bilinear2d(x, target, c.bool_arg(2)));
}

// grid_sampler_2d(input, grid, interpolation_mode, padding_mode, align_corners)
void grid_sampler(const OpContext& c) {
  c.set_output(kernels::grid_sample(c.tensor(0), c.tensor(1), static_cast<int>(c.int_arg(2)),
                                    static_cast<int>(c.int_arg(3)), c.bool_arg(4)));
}

}  // namespace

void add_norm_pool_ops(OpTable& t) {
  using kernels::ReduceOp;
  t["aten.max_pool2d_with_indices.default"] = max_pool2d;
  t["aten.avg_pool2d.default"] = avg_pool2d;
  t["aten._native_batch_norm_legit_no_training.default"] = batch_norm;
  t["aten.native_layer_norm.default"] = layer_norm;
  t["aten.native_group_norm.default"] = group_norm;
  t["aten._softmax.default"] = softmax<false>;
  t["aten._log_softmax.default"] = softmax<true>;
  t["aten.mean.dim"] = reduce<ReduceOp::Mean, true>;
  t["aten.sum.dim_IntList"] = reduce<ReduceOp::Sum, true>;
  t["aten.amax.default"] = reduce<ReduceOp::Max, false>;
  t["aten.amin.default"] = reduce<ReduceOp::Min, false>;
  t["aten.argmax.default"] = arg_reduce<true>;
  t["aten.argmin.default"] = arg_reduce<false>;
  t["aten.upsample_nearest2d.vec"] = upsample_nearest;
  t["aten.upsample_bilinear2d.vec"] = upsample_bilinear;
  t["aten.grid_sampler_2d.default"] = grid_sampler;
}

}  // namespace vkc::runtime::cpu
