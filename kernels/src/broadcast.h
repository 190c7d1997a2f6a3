// Iteration over a broadcast output: for each output element, the flat index into each input.
#pragma once

#include <array>
#include <initializer_list>
#include <vector>

#include "vkc/kernels/host_tensor.h"

namespace vkc::kernels {

/// Calls fn(out_index, in_indices) for every element of `out_shape`; each input shape
/// broadcasts to it (right-aligned, size-1 dims repeat). At most 3 inputs.
template <typename Fn>
void for_each_broadcast(const std::vector<int64_t>& out_shape, std::initializer_list<const std::vector<int64_t>*> ins,
                        Fn&& fn) {
  const size_t rank = out_shape.size();
  const size_t n_in = ins.size();
  // Per input, the stride of each output dim (0 where the input broadcasts).
  std::vector<std::vector<int64_t>> strides;
  for (const auto* shape : ins) {
    std::vector<int64_t> s(rank, 0);
    const auto own = strides_of(*shape);
    for (size_t i = 0; i < shape->size(); ++i) {
      const size_t d = rank - shape->size() + i;
      s[d] = (*shape)[i] == 1 ? 0 : own[i];
    }
    strides.push_back(std::move(s));
  }
  int64_t total = 1;
  for (int64_t d : out_shape) total *= d;
  std::vector<int64_t> idx(rank, 0);
  std::array<int64_t, 3> offs{0, 0, 0};
  for (int64_t o = 0; o < total; ++o) {
    fn(o, offs.data());
    for (size_t d = rank; d-- > 0;) {
      ++idx[d];
      for (size_t k = 0; k < n_in; ++k) offs[k] += strides[k][d];
      if (idx[d] < out_shape[d]) break;
      for (size_t k = 0; k < n_in; ++k) offs[k] -= strides[k][d] * idx[d];
      idx[d] = 0;
    }
  }
}

}  // namespace vkc::kernels
