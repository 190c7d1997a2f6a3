// The operator-coverage tables, generated from the lowering table, the pass pipeline and
// the runtime op registry: `vkc ops` prints them, docs/op-coverage.md holds them.
#pragma once

#include <string>

namespace vkc::compiler {

/// Markdown: ONNX operator -> runtime operators and conditions; the fusions; every runtime
/// operator with its family, dtypes, representations and the arguments it prepacks itself.
std::string op_coverage_markdown();

}  // namespace vkc::compiler
