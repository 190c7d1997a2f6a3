// Node tests pass weights (Conv W/B, Gemm B/C, BatchNormalization statistics, Clip bounds,
// Reshape shapes, ...) as graph inputs. The runtime's operators take those as constants, so
// the runner makes them initializers with the test's own values before compiling.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace onnx {
class ModelProto;
class TensorProto;
}  // namespace onnx

namespace vkc::conformance {

/// Graph inputs that some node reads in a parameter position (see fold_inputs.cpp).
std::vector<std::string> weight_inputs(const onnx::ModelProto& model);

/// Moves each named graph input into the initializers with the value in `values`.
void fold_inputs(onnx::ModelProto& model, const std::map<std::string, onnx::TensorProto>& values);

}  // namespace vkc::conformance
