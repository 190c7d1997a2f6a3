// --input-value NAME=V[,V...]: a graph input bound to constant values becomes an initializer before
// the checker and shape inference run, so what depends on it folds (an If on a sample rate or on
// use_cache_branch resolves to one branch). The compiled program no longer takes that input.
#pragma once

#include <map>
#include <string>

namespace onnx {
class ModelProto;
}  // namespace onnx

namespace vkc::compiler::detail {

/// Turns each named graph input into an initializer holding the given comma-separated values, in
/// the input's element type (float, integer or bool types; true/false or 1/0 for bool) and declared
/// shape (a scalar or [N] where the input has no static shape). Throws ImportError naming the input.
void bind_input_values(onnx::ModelProto& model, const std::map<std::string, std::string>& values);

}  // namespace vkc::compiler::detail
