// Padding, splitting and pixel shuffling CPU reference kernels (aten semantics).
#pragma once

#include <vector>

#include "vkc/kernels/host_tensor.h"

namespace vkc::kernels {

/// aten.constant_pad_nd: `pad` holds (before, after) pairs starting from the LAST dim; negative
/// amounts crop. New elements are `value`.
HostTensor constant_pad_nd(const HostTensor& x, const std::vector<int64_t>& pad, double value);
/// Consecutive pieces of `sizes` along `dim` (the sizes must add up to the dim).
std::vector<HostTensor> split_with_sizes(const HostTensor& x, const std::vector<int64_t>& sizes, int64_t dim);

/// aten.pixel_shuffle: [..., C * r * r, H, W] -> [..., C, H * r, W * r].
HostTensor pixel_shuffle(const HostTensor& x, int64_t r);

}  // namespace vkc::kernels
