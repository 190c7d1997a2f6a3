// Comparing computed tensors with expected ones, and summarizing them.
#pragma once

#include <cstdint>
#include <string>

#include "vkc/kernels/host_tensor.h"

namespace vkc::runtime {

struct Comparison {
  bool shape_matches = true;
  int64_t mismatches = 0;  // elements outside atol + rtol * |expected| (NaN matches only NaN)
  double max_abs = 0;      // max |got - expected|
  double max_rel = 0;      // max |got - expected| / |expected| over expected != 0
  bool pass() const { return shape_matches && mismatches == 0; }
};

/// numpy.allclose-style comparison, element by element (any numeric dtypes).
Comparison compare(const kernels::HostTensor& got, const kernels::HostTensor& expected, double rtol, double atol);

struct Summary {
  double min = 0, max = 0, mean = 0;
  int64_t nan = 0, inf = 0;
};
Summary summarize(const kernels::HostTensor& t);

/// "f32 [1,3,4,4]"
std::string describe(const kernels::HostTensor& t);

}  // namespace vkc::runtime
