// Activations and unary math the elementwise kernels lack (aten semantics).
#pragma once

#include <optional>

#include "vkc/kernels/host_tensor.h"

namespace vkc::kernels {

enum class Activation {
  HardSwish,    // x * clamp(x + 3, 0, 6) / 6
  HardSigmoid,  // clamp(x + 3, 0, 6) / 6
  Gelu,         // 0.5 x (1 + erf(x / sqrt 2))
  GeluTanh,     // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
  Rsqrt,        // 1 / sqrt x
  Log10,
};

/// Elementwise; the result has x's dtype.
HostTensor activation(Activation op, const HostTensor& x);
/// min(max(x, lo), hi); absent bounds do not clip. Integer tensors stay integer.
HostTensor clamp(const HostTensor& x, std::optional<double> lo, std::optional<double> hi);
/// x >= 0 ? x : slope * x
HostTensor leaky_relu(const HostTensor& x, double slope);
/// pow(x, exponent)
HostTensor pow_scalar(const HostTensor& x, double exponent);

}  // namespace vkc::kernels
