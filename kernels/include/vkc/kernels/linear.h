// Matrix-product CPU reference kernels (aten semantics; fp32 math, result in a's dtype).
#pragma once

#include "vkc/kernels/host_tensor.h"

namespace vkc::kernels {

/// aten.linear: x [..., K] times weight [N, K] transposed, plus bias [N] or [1] (or null) -> [..., N].
HostTensor linear(const HostTensor& x, const HostTensor& weight, const HostTensor* bias);
/// aten.mm ([M, K] x [K, N]) and aten.bmm ([B, M, K] x [B, K, N]); also any equal leading batch dims.
HostTensor matmul(const HostTensor& a, const HostTensor& b);
/// aten.addmm: beta * self + alpha * (m1 @ m2); self broadcasts to [M, N].
HostTensor addmm(const HostTensor& self, const HostTensor& m1, const HostTensor& m2, double beta, double alpha);

}  // namespace vkc::kernels
