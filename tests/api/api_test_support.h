// Shared by the API tests: the example model and its options.
#pragma once

#include <filesystem>

#include "onnx_test_models.h"
#include "vkc/vkc.h"

namespace vkc::test {

inline const fs::path kExampleModel = fs::path(VKC_SOURCE_DIR) / "examples/models/tiny_cnn.onnx";

inline CompileOptions example_options() {
  CompileOptions o;
  o.input_shapes["image"] = {1, 3, 32, 32};
  return o;
}

/// "error: ..." lines, for failure messages.
inline std::string describe(const std::vector<Diagnostic>& diagnostics) {
  std::string s;
  for (const auto& d : diagnostics) s += d.str() + "\n";
  return s;
}

}  // namespace vkc::test
