// Builds the IR graph from a checked, shape-inferred GraphProto.
#pragma once

#include <string>
#include <vector>

#include "vkc/ir/graph.h"

namespace onnx {
class GraphProto;
}

namespace vkc::compiler::detail {

class TensorReader;

/// The initializers of `proto`, in order, read by `reader`.
std::vector<ir::TensorAttr> read_initializers(const onnx::GraphProto& proto, const TensorReader& reader);

/// Fills `graph`, whose opsets are already set, from `proto`:
/// - initializers (given already read) become constants, also when old-IR models list them as
///   graph inputs; Constant nodes become constants too;
/// - the other nodes are appended in file order with their attributes, named `node_names`,
///   omitted optional inputs as nullptr, then sorted topologically;
/// - every value gets its type from value_info / graph inputs / outputs (Undefined when none).
void build_graph(const onnx::GraphProto& proto, const std::vector<std::string>& node_names,
                 std::vector<ir::TensorAttr> initializers, const TensorReader& reader, ir::Graph& graph);

}  // namespace vkc::compiler::detail
