#include "vkc/kernels/softmax.h"

#include <algorithm>
#include <cmath>

#include "float_io.h"

namespace vkc::kernels {

namespace {

HostTensor softmax_impl(const HostTensor& x, int64_t axis, bool log) {
  const int64_t rank = static_cast<int64_t>(x.shape.size());
  axis = normalize_axis(axis, rank);
  const int64_t n = rank == 0 ? 1 : x.shape[axis];
  int64_t inner = 1;
  for (int64_t d = axis + 1; d < rank; ++d) inner *= x.shape[d];
  const int64_t outer = x.numel() / std::max<int64_t>(n * inner, 1);
  std::vector<float> v = to_f32(x);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      float* base = &v[o * n * inner + i];
      float mx = -INFINITY;
      for (int64_t k = 0; k < n; ++k) mx = std::max(mx, base[k * inner]);
      double sum = 0;
      for (int64_t k = 0; k < n; ++k) sum += std::exp(static_cast<double>(base[k * inner]) - mx);
      for (int64_t k = 0; k < n; ++k) {
        const double shifted = static_cast<double>(base[k * inner]) - mx;
        base[k * inner] = static_cast<float>(log ? shifted - std::log(sum) : std::exp(shifted) / sum);
      }
    }
  return from_f32(x.dtype, x.shape, std::move(v));
}

}  // namespace

HostTensor softmax(const HostTensor& x, int64_t axis) { return softmax_impl(x, axis, false); }
HostTensor log_softmax(const HostTensor& x, int64_t axis) { return softmax_impl(x, axis, true); }

}  // namespace vkc::kernels
