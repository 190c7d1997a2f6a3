#include "vkc/kernels/quantized.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace vkc::kernels {
namespace {

// q of row n, column k of an int4-packed matrix with `row_bytes` bytes a row.
int int4_at(const HostTensor& w, int64_t row_bytes, int64_t n, int64_t k) {
  const int64_t byte = w.get_i(n * row_bytes + k / 2);
  return static_cast<int>((k % 2 == 0 ? byte & 0xf : (byte >> 4) & 0xf)) - 8;
}

int64_t rows_of(const HostTensor& x) { return x.numel() / std::max<int64_t>(x.shape.back(), 1); }

std::vector<int64_t> out_shape(const HostTensor& x, int64_t n) {
  std::vector<int64_t> s = x.shape;
  s.back() = n;
  return s;
}

// out[m, n] = sum_k a(m, k) * dequant(w)[n, k] + bias[n], a given by `act`.
template <typename Act>
HostTensor q4_matmul(const HostTensor& x, const HostTensor& w, const HostTensor& scales, int64_t group,
                     const HostTensor* bias, Act act) {
  if (x.shape.empty() || w.shape.size() != 2 || scales.shape.size() != 2)
    throw KernelError("int4 linear: input, [N, K/2] weights and [G, N] scales expected");
  const int64_t K = x.shape.back(), N = w.shape[0], row_bytes = w.shape[1];
  if (group <= 0 || K % group || row_bytes * 2 < K || scales.shape[0] != K / group || scales.shape[1] < N)
    throw KernelError(fmt::format("int4 linear: K {} group {} weights [{}] scales [{}] do not agree", K, group,
                                  fmt::join(w.shape, ","), fmt::join(scales.shape, ",")));
  if (bias && bias->numel() != N) throw KernelError("int4 linear: bias size differs from N");
  const int64_t sn = scales.shape[1];
  HostTensor out = HostTensor::zeros(x.dtype, out_shape(x, N));
  for (int64_t m = 0; m < rows_of(x); ++m)
    for (int64_t n = 0; n < N; ++n) {
      double acc = bias ? bias->get_f(n) : 0.0;
      for (int64_t k = 0; k < K; ++k)
        acc += act(m, k) * int4_at(w, row_bytes, n, k) * scales.get_f((k / group) * sn + n);
      out.set_f(m * N + n, acc);
    }
  return out;
}

}  // namespace

HostTensor dequantize_linear(const HostTensor& x, const HostTensor& scale, const HostTensor* zero_point, int64_t axis,
                             int64_t block_size) {
  // One element each may differ in rank: onnxruntime 1.30's quantizer writes [1] bias scales with
  // scalar zero points.
  if (zero_point && zero_point->shape != scale.shape && !(zero_point->numel() == 1 && scale.numel() == 1))
    throw KernelError("DequantizeLinear: zero point and scale differ in shape");
  const int64_t rank = static_cast<int64_t>(x.shape.size());
  HostTensor out = HostTensor::zeros(ir::DType::Float32, x.shape);
  const int64_t n = x.numel();
  if (scale.numel() == 1) {
    const double s = scale.get_f(0), z = zero_point ? static_cast<double>(zero_point->get_i(0)) : 0.0;
    for (int64_t i = 0; i < n; ++i) out.set_f(i, (static_cast<double>(x.get_i(i)) - z) * s);
    return out;
  }
  axis = normalize_axis(axis, rank);
  const std::vector<int64_t> strides = strides_of(x.shape);
  const bool blocked = static_cast<int64_t>(scale.shape.size()) == rank && rank > 1;
  if (!blocked && (scale.shape.size() != 1 || scale.shape[0] != x.shape[axis]))
    throw KernelError(fmt::format("DequantizeLinear: scale of {} elements for axis {} of size {}", scale.numel(), axis,
                                  x.shape[axis]));
  if (blocked && block_size <= 0) throw KernelError("DequantizeLinear: a blocked scale needs block_size");
  const std::vector<int64_t> scale_strides = strides_of(scale.shape);
  for (int64_t i = 0; i < n; ++i) {
    int64_t si = 0;
    if (!blocked) {
      si = (i / strides[axis]) % x.shape[axis];
    } else {
      for (int64_t d = 0, rest = i; d < rank; ++d) {
        int64_t c = rest / strides[d];
        rest %= strides[d];
        if (d == axis) c /= block_size;
        if (c >= scale.shape[d]) throw KernelError("DequantizeLinear: blocked scale is too small");
        si += c * scale_strides[d];
      }
    }
    const double z = zero_point ? static_cast<double>(zero_point->get_i(si)) : 0.0;
    out.set_f(i, (static_cast<double>(x.get_i(i)) - z) * scale.get_f(si));
  }
  return out;
}

HostTensor int8pack_mm(const HostTensor& x, const HostTensor& w, const HostTensor& scales) {
  const int64_t K = x.shape.back();
  if (w.shape.size() != 2 || w.shape[1] != K || scales.numel() != w.shape[0])
    throw KernelError("_weight_int8pack_mm: [N, K] weights and [N] scales expected");
  const int64_t N = w.shape[0];
  HostTensor out = HostTensor::zeros(x.dtype, out_shape(x, N));
  for (int64_t m = 0; m < rows_of(x); ++m)
    for (int64_t n = 0; n < N; ++n) {
      double acc = 0;
      for (int64_t k = 0; k < K; ++k) acc += x.get_f(m * K + k) * static_cast<double>(w.get_i(n * K + k));
      out.set_f(m * N + n, acc * scales.get_f(n));
    }
  return out;
}

HostTensor linear_q4gsw(const HostTensor& x, const HostTensor& w, const HostTensor& scales, int64_t group,
                        const HostTensor* bias) {
  const int64_t K = x.shape.back();
  return q4_matmul(x, w, scales, group, bias, [&](int64_t m, int64_t k) { return x.get_f(m * K + k); });
}

std::pair<HostTensor, HostTensor> choose_qparams_per_row(const HostTensor& x, int64_t qmin, int64_t qmax, double eps,
                                                         std::vector<int64_t> scale_shape,
                                                         std::vector<int64_t> zp_shape) {
  const int64_t K = x.shape.back(), rows = rows_of(x);
  HostTensor scale = HostTensor::zeros(ir::DType::Float32, std::move(scale_shape));
  HostTensor zp = HostTensor::zeros(ir::DType::Int8, std::move(zp_shape));
  if (scale.numel() != rows || zp.numel() != rows) throw KernelError("choose_qparams: one scale per row expected");
  for (int64_t m = 0; m < rows; ++m) {
    double lo = 0, hi = 0;  // the range always holds 0
    for (int64_t k = 0; k < K; ++k) {
      lo = std::min(lo, x.get_f(m * K + k));
      hi = std::max(hi, x.get_f(m * K + k));
    }
    const double s = std::max((hi - lo) / static_cast<double>(qmax - qmin), eps);
    const double z = std::clamp<double>(static_cast<double>(qmin) - std::nearbyint(lo / s), qmin, qmax);
    scale.set_f(m, static_cast<float>(s));
    zp.set_i(m, static_cast<int64_t>(z));
  }
  return {scale, zp};
}

HostTensor linear_dq8ca_q4gsw(const HostTensor& x, const HostTensor& x_scale, const HostTensor& x_zp,
                              const HostTensor& w, const HostTensor& scales, int64_t group, const HostTensor* bias) {
  const int64_t K = x.shape.back();
  if (x_scale.numel() != rows_of(x) || x_zp.numel() != rows_of(x))
    throw KernelError("linear_dq8ca_q4gsw: one input scale and zero point per row expected");
  return q4_matmul(x, w, scales, group, bias, [&](int64_t m, int64_t k) {
    const double s = x_scale.get_f(m);
    const int64_t z = x_zp.get_i(m);
    const int64_t q = std::clamp<int64_t>(float_to_int64(std::nearbyint(x.get_f(m * K + k) / s)) + z, -128, 127);
    return static_cast<double>(q - z) * s;
  });
}

HostTensor embedding_q4gsw(const HostTensor& w, const HostTensor& scales, int64_t group, const HostTensor& indices) {
  if (w.shape.size() != 2 || scales.shape.size() != 2 || group <= 0)
    throw KernelError("embedding_q4gsw: [V, D/2] weights and [V, D/group] scales expected");
  const int64_t V = w.shape[0], row_bytes = w.shape[1], D = scales.shape[1] * group;
  if (scales.shape[0] != V || row_bytes * 2 < D) throw KernelError("embedding_q4gsw: weights and scales disagree");
  std::vector<int64_t> shape = indices.shape;
  shape.push_back(D);
  HostTensor out = HostTensor::zeros(ir::DType::Float32, shape);
  for (int64_t i = 0; i < indices.numel(); ++i) {
    const int64_t row = indices.get_i(i);
    if (row < 0 || row >= V) throw KernelError(fmt::format("embedding index {} is out of range [0, {})", row, V));
    for (int64_t d = 0; d < D; ++d)
      out.set_f(i * D + d, int4_at(w, row_bytes, row, d) * scales.get_f(row * scales.shape[1] + d / group));
  }
  return out;
}

}  // namespace vkc::kernels
