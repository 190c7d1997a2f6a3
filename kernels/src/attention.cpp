#include "vkc/kernels/attention.h"

#include <fmt/format.h>

#include <cmath>
#include <vector>

#include "broadcast.h"

namespace vkc::kernels {

HostTensor rms_norm(const HostTensor& x, const HostTensor& w, double eps) {
  if (x.shape.empty()) throw KernelError("rms_norm of a scalar");
  const int64_t d = x.shape.back();
  if (w.numel() != d) throw KernelError(fmt::format("rms_norm weight has {} elements, expected {}", w.numel(), d));
  HostTensor out = HostTensor::zeros(x.dtype, x.shape);
  for (int64_t row = 0; row < x.numel() / std::max<int64_t>(d, 1); ++row) {
    double sq = 0;
    for (int64_t i = 0; i < d; ++i) sq += x.get_f(row * d + i) * x.get_f(row * d + i);
    const double inv = 1.0 / std::sqrt(sq / static_cast<double>(d) + eps);
    for (int64_t i = 0; i < d; ++i) out.set_f(row * d + i, x.get_f(row * d + i) * inv * w.get_f(i));
  }
  return out;
}

HostTensor sdpa(const HostTensor& q, const HostTensor& k, const HostTensor& v, const HostTensor* mask, double scale) {
  const size_t r = q.shape.size();
  if (r < 2 || k.shape.size() != r || v.shape.size() != r) throw KernelError("sdpa needs q, k, v of one rank >= 2");
  const int64_t s = q.shape[r - 2], dq = q.shape[r - 1], l = k.shape[r - 2], dv = v.shape[r - 1];
  if (k.shape[r - 1] != dq || v.shape[r - 2] != l) throw KernelError("sdpa: q, k, v sizes do not agree");
  int64_t batch = 1;
  for (size_t i = 0; i + 2 < r; ++i) {
    if (k.shape[i] != q.shape[i] || v.shape[i] != q.shape[i]) throw KernelError("sdpa: batch dims differ");
    batch *= q.shape[i];
  }
  std::vector<int64_t> score_shape(q.shape.begin(), q.shape.end() - 2);
  score_shape.insert(score_shape.end(), {s, l});
  // The mask's flat index for each score element.
  std::vector<int64_t> mask_index;
  if (mask) {
    mask_index.resize(batch * s * l);
    for_each_broadcast(broadcast_shapes(score_shape, mask->shape), {&mask->shape},
                       [&](int64_t o, const int64_t* in) { mask_index[o] = in[0]; });
  }
  std::vector<int64_t> out_shape(q.shape.begin(), q.shape.end() - 1);
  out_shape.push_back(dv);
  HostTensor out = HostTensor::zeros(q.dtype, out_shape);
  std::vector<double> row(l);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t i = 0; i < s; ++i) {
      double mx = -INFINITY;
      for (int64_t j = 0; j < l; ++j) {
        double dot = 0;
        for (int64_t c = 0; c < dq; ++c) dot += q.get_f((b * s + i) * dq + c) * k.get_f((b * l + j) * dq + c);
        row[j] = dot * scale + (mask ? mask->get_f(mask_index[(b * s + i) * l + j]) : 0.0);
        mx = std::max(mx, row[j]);
      }
      double sum = 0;
      for (double& e : row) sum += (e = std::exp(e - mx));
      for (int64_t c = 0; c < dv; ++c) {
        double acc = 0;
        for (int64_t j = 0; j < l; ++j) acc += row[j] / sum * v.get_f((b * l + j) * dv + c);
        out.set_f((b * s + i) * dv + c, acc);
      }
    }
  return out;
}

}  // namespace vkc::kernels
