// Convolution CPU reference kernel (aten.convolution semantics).
#pragma once

#include <vector>

#include "vkc/kernels/host_tensor.h"

namespace vkc::kernels {

/// One value per spatial dim (1 for 1-D, 2 for 2-D); a single value is repeated.
struct ConvParams {
  std::vector<int64_t> stride{1}, padding{0}, dilation{1}, output_padding{0};
  bool transposed = false;
  int64_t groups = 1;
};

/// aten.convolution on a rank-3 (1-D) or rank-4 (2-D) input [N, C, (H,) W].
/// weight: [Cout, Cin/groups, (kH,) kW], or [Cin, Cout/groups, (kH,) kW] when transposed.
/// bias: [Cout] or null. The result has x's dtype; math is fp32.
HostTensor convolution(const HostTensor& x, const HostTensor& weight, const HostTensor* bias, const ConvParams& p);

}  // namespace vkc::kernels
