// 2-D pooling CPU reference kernels (aten.max_pool2d_with_indices / aten.avg_pool2d semantics).
#pragma once

#include <optional>

#include "vkc/kernels/host_tensor.h"

namespace vkc::kernels {

/// Per spatial dim (H, W). An empty stride means stride = kernel.
struct PoolParams {
  int64_t kernel[2] = {1, 1}, stride[2] = {1, 1}, padding[2] = {0, 0}, dilation[2] = {1, 1};
  bool ceil_mode = false;
};

/// The pooled output size of one dim, as ATen's pooling_output_shape computes it.
int64_t pool_output_size(int64_t in, int64_t kernel, int64_t pad, int64_t stride, int64_t dilation, bool ceil_mode);

struct MaxPoolResult {
  HostTensor values;
  HostTensor indices;  // int64, flat h * W + w within each input plane, as ATen
};

/// Input [N, C, H, W] (or [C, H, W]); padding is -inf.
MaxPoolResult max_pool2d(const HostTensor& x, const PoolParams& p);
/// Divisor: divisor_override, else the window size clipped to the padded input (count_include_pad)
/// or to the input itself.
HostTensor avg_pool2d(const HostTensor& x, const PoolParams& p, bool count_include_pad,
                      std::optional<int64_t> divisor_override);

}  // namespace vkc::kernels
