#include "vkc/kernels/activation.h"

#include <algorithm>
#include <cmath>

namespace vkc::kernels {
namespace {

template <typename Fn>
HostTensor map_float(const HostTensor& x, Fn&& fn) {
  HostTensor out = HostTensor::zeros(x.dtype, x.shape);
  for (int64_t i = 0; i < x.numel(); ++i) out.set_f(i, fn(x.get_f(i)));
  return out;
}

double relu6(double v) { return std::min(std::max(v, 0.0), 6.0); }

}  // namespace

HostTensor activation(Activation op, const HostTensor& x) {
  switch (op) {
    case Activation::HardSwish: return map_float(x, [](double v) { return v * relu6(v + 3) / 6; });
    case Activation::HardSigmoid: return map_float(x, [](double v) { return relu6(v + 3) / 6; });
    case Activation::Gelu: return map_float(x, [](double v) { return 0.5 * v * (1 + std::erf(v / std::sqrt(2.0))); });
    case Activation::GeluTanh:
      return map_float(x, [](double v) {
        return 0.5 * v * (1 + std::tanh(std::sqrt(2.0 / M_PI) * (v + 0.044715 * v * v * v)));
      });
    case Activation::Rsqrt: return map_float(x, [](double v) { return 1.0 / std::sqrt(v); });
    case Activation::Log10: return map_float(x, [](double v) { return std::log10(v); });
  }
  throw KernelError("unknown activation");
}

HostTensor clamp(const HostTensor& x, std::optional<double> lo, std::optional<double> hi) {
  if (!ir::is_float(x.dtype)) {
    HostTensor out = HostTensor::zeros(x.dtype, x.shape);
    for (int64_t i = 0; i < x.numel(); ++i) {
      int64_t v = x.get_i(i);
      if (lo) v = std::max(v, float_to_int64(std::ceil(*lo)));
      if (hi) v = std::min(v, float_to_int64(std::floor(*hi)));
      out.set_i(i, v);
    }
    return out;
  }
  return map_float(x, [&](double v) {
    if (std::isnan(v)) return v;
    if (lo) v = std::max(v, *lo);
    if (hi) v = std::min(v, *hi);
    return v;
  });
}

HostTensor leaky_relu(const HostTensor& x, double slope) {
  return map_float(x, [slope](double v) { return v >= 0 ? v : v * slope; });
}

HostTensor pow_scalar(const HostTensor& x, double exponent) {
  return map_float(x, [exponent](double v) { return std::pow(v, exponent); });
}

}  // namespace vkc::kernels
