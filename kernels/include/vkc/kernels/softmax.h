// Softmax CPU reference kernels (aten._softmax / aten._log_softmax semantics).
#pragma once

#include "vkc/kernels/host_tensor.h"

namespace vkc::kernels {

/// exp(x - max) / sum over `axis` (negative counts from the end); fp32 math, x's dtype.
HostTensor softmax(const HostTensor& x, int64_t axis);
/// x - max - log(sum(exp(x - max))) over `axis`.
HostTensor log_softmax(const HostTensor& x, int64_t axis);

}  // namespace vkc::kernels
