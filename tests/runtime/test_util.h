// Small helpers shared by the runtime tests.
#pragma once

#include <gmock/gmock.h>

#include <vector>

#include "vkc/kernels/host_tensor.h"

namespace vkc::test {

inline kernels::HostTensor f32(std::vector<int64_t> shape, std::vector<float> v) {
  return kernels::HostTensor::of(ir::DType::Float32, std::move(shape), v);
}

inline std::vector<double> values(const kernels::HostTensor& t) {
  std::vector<double> out;
  for (int64_t i = 0; i < t.numel(); ++i) out.push_back(t.get_f(i));
  return out;
}

/// Matches a tensor's values element by element within 1e-5 (+ 1e-5 relative).
inline auto near(std::vector<double> want) {
  std::vector<::testing::Matcher<double>> m;
  for (double w : want) m.push_back(::testing::DoubleNear(w, 1e-5 + 1e-5 * std::abs(w)));
  return ::testing::ElementsAreArray(m);
}

using Shape = std::vector<int64_t>;

}  // namespace vkc::test
