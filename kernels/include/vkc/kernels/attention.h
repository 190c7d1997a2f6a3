// Transformer-block reference kernels: RMSNorm and scaled dot-product attention.
#pragma once

#include "vkc/kernels/host_tensor.h"

namespace vkc::kernels {

/// y = x / sqrt(mean(x^2 over the last dim) + eps) * w, w of the last dim's size.
HostTensor rms_norm(const HostTensor& x, const HostTensor& w, double eps);
/// softmax(q k^T * scale + mask) v over the last two dims of [..., S, D] / [..., L, D] / [..., L, Dv];
/// `mask` (optional) broadcasts to [..., S, L].
HostTensor sdpa(const HostTensor& q, const HostTensor& k, const HostTensor& v, const HostTensor* mask, double scale);

}  // namespace vkc::kernels
