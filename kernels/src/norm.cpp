#include "vkc/kernels/norm.h"

#include <fmt/format.h>

#include <cmath>

#include "float_io.h"

namespace vkc::kernels {
namespace {

// Mean and 1 / sqrt(biased variance + eps) of x[0, n), two passes in double.
struct Moments {
  double mean, rstd;
};
Moments moments(const float* x, int64_t n, double eps) {
  double sum = 0, sq = 0;
  for (int64_t i = 0; i < n; ++i) sum += x[i];
  const double mean = sum / n;
  for (int64_t i = 0; i < n; ++i) sq += (x[i] - mean) * (x[i] - mean);
  return {mean, 1.0 / std::sqrt(sq / n + eps)};
}

}  // namespace

LayerNormResult layer_norm(const HostTensor& x, size_t normalized_dims, const HostTensor* weight,
                           const HostTensor* bias, double eps) {
  if (normalized_dims == 0 || normalized_dims > x.shape.size())
    throw KernelError(fmt::format("layer_norm: {} normalized dims for rank {}", normalized_dims, x.shape.size()));
  int64_t n = 1;
  for (size_t d = x.shape.size() - normalized_dims; d < x.shape.size(); ++d) n *= x.shape[d];
  if ((weight && weight->numel() != n) || (bias && bias->numel() != n))
    throw KernelError("layer_norm: weight/bias size != normalized size");
  const int64_t groups = x.numel() / std::max<int64_t>(n, 1);
  std::vector<float> v = to_f32(x);
  const std::vector<float> w = weight ? to_f32(*weight) : std::vector<float>(n, 1.0f);
  const std::vector<float> b = bias ? to_f32(*bias) : std::vector<float>(n, 0.0f);
  std::vector<float> means(groups), rstds(groups);
  for (int64_t g = 0; g < groups; ++g) {
    float* row = &v[g * n];
    const auto [mean, rstd] = moments(row, n, eps);
    for (int64_t i = 0; i < n; ++i) row[i] = static_cast<float>((row[i] - mean) * rstd * w[i] + b[i]);
    means[g] = static_cast<float>(mean);
    rstds[g] = static_cast<float>(rstd);
  }
  std::vector<int64_t> stat_shape = x.shape;
  for (size_t d = x.shape.size() - normalized_dims; d < x.shape.size(); ++d) stat_shape[d] = 1;
  return {from_f32(x.dtype, x.shape, std::move(v)), from_f32(x.dtype, stat_shape, std::move(means)),
          from_f32(x.dtype, stat_shape, std::move(rstds))};
}

GroupNormResult group_norm(const HostTensor& x, const HostTensor* weight, const HostTensor* bias, int64_t groups,
                           double eps) {
  if (x.shape.size() < 2) throw KernelError("group_norm: input rank < 2");
  const int64_t N = x.shape[0], C = x.shape[1];
  if (groups < 1 || C % groups != 0) throw KernelError(fmt::format("group_norm: {} channels in {} groups", C, groups));
  if ((weight && weight->numel() != C) || (bias && bias->numel() != C))
    throw KernelError("group_norm: weight/bias size != channels");
  const int64_t hw = x.numel() / std::max<int64_t>(N * C, 1), per_group = C / groups * hw;
  std::vector<float> v = to_f32(x);
  std::vector<float> means(N * groups), rstds(N * groups);
  for (int64_t g = 0; g < N * groups; ++g) {
    float* base = &v[g * per_group];
    const auto [mean, rstd] = moments(base, per_group, eps);
    for (int64_t i = 0; i < per_group; ++i) {
      const int64_t c = (g % groups) * (C / groups) + i / hw;
      const double w = weight ? weight->get_f(c) : 1.0, b = bias ? bias->get_f(c) : 0.0;
      base[i] = static_cast<float>((base[i] - mean) * rstd * w + b);
    }
    means[g] = static_cast<float>(mean);
    rstds[g] = static_cast<float>(rstd);
  }
  return {from_f32(x.dtype, x.shape, std::move(v)), from_f32(x.dtype, {N, groups}, std::move(means)),
          from_f32(x.dtype, {N, groups}, std::move(rstds))};
}

HostTensor batch_norm(const HostTensor& x, const HostTensor* weight, const HostTensor* bias,
                      const HostTensor& mean, const HostTensor& var, double eps) {
  if (x.shape.size() < 2) throw KernelError("batch_norm: input rank < 2");
  const int64_t C = x.shape[1];
  if (mean.numel() != C || var.numel() != C || (weight && weight->numel() != C) || (bias && bias->numel() != C))
    throw KernelError(fmt::format("batch_norm: parameters do not have {} channels", C));
  int64_t inner = 1;
  for (size_t d = 2; d < x.shape.size(); ++d) inner *= x.shape[d];
  std::vector<float> v = to_f32(x);
  for (int64_t i = 0; i < static_cast<int64_t>(v.size()); ++i) {
    const int64_t c = (i / inner) % C;
    const double scale = (weight ? weight->get_f(c) : 1.0) / std::sqrt(var.get_f(c) + eps);
    v[i] = static_cast<float>((v[i] - mean.get_f(c)) * scale + (bias ? bias->get_f(c) : 0.0));
  }
  return from_f32(x.dtype, x.shape, std::move(v));
}

}  // namespace vkc::kernels
