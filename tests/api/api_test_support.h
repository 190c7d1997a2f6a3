// Shared by the API tests: the example model and its options.
#pragma once

#include <filesystem>
#include <random>

#include "onnx_test_models.h"
#include "vkc/vkc.h"

namespace vkc::test {

inline const fs::path kExampleModel = fs::path(VKC_SOURCE_DIR) / "examples/models/tiny_cnn.onnx";

inline CompileOptions example_options() {
  CompileOptions o;
  o.input_shapes["image"] = {1, 3, 32, 32};
  return o;
}

/// n values of a standard normal distribution from `seed`.
inline std::vector<float> normal_floats(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.f, 1.f);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

/// "error: ..." lines, for failure messages.
inline std::string describe(const std::vector<Diagnostic>& diagnostics) {
  std::string s;
  for (const auto& d : diagnostics) s += d.str() + "\n";
  return s;
}

}  // namespace vkc::test
