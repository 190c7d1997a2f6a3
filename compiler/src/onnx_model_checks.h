// What the importer checks before it trusts a ModelProto: the node domains and
// features vkc supports, and (for IR versions it knows) the ONNX checker.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace onnx {
class GraphProto;
class ModelProto;
class NodeProto;
}  // namespace onnx

namespace vkc::compiler::detail {

/// The IR domain of an ONNX domain: "ai.onnx" is the default domain "".
std::string normalize_domain(const std::string& domain);

/// "node 'conv1' (Conv)", "node 'foo' (custom.domain::MyOp)".
std::string describe_node(const std::string& name, const onnx::NodeProto& node);

/// One name per node, in order: the ONNX name, or `<OpType>_<n>` for unnamed nodes; a repeated
/// name gets a `_<n>` suffix so that names are unique.
std::vector<std::string> unique_node_names(const onnx::GraphProto& graph);

/// Puts the graph's nodes in topological order (stable: already-sorted graphs are unchanged), as
/// onnxruntime accepts them from converters that leave them out of order. Throws ImportError naming a
/// node of a cycle, or a node input that nothing produces.
void sort_nodes(onnx::GraphProto& graph);

/// Opset imports of the domains vkc lists ("", "com.microsoft", "ai.onnx.ml"), by IR domain.
std::map<std::string, int64_t> listed_opsets(const onnx::ModelProto& model);

/// Throws ImportError for the first node vkc cannot import: a domain other than the default one
/// and com.microsoft, a domain without an opset import, or a subgraph attribute (control flow).
void check_supported_nodes(const onnx::GraphProto& graph, const std::vector<std::string>& names,
                           const std::map<std::string, int64_t>& opsets);

/// The first line of an ONNX library error (they append multi-line context).
std::string first_line(const char* message);

/// Builds libonnx's operator schema registry (about 5 ms, on first use). The importer calls it on
/// a second thread while it parses the model, which needs no schemas.
void warm_schema_registry();

/// onnxruntime registers a few of its own operators in the ONNX domain (SimplifiedLayerNormalization,
/// which onnxruntime-genai's model builder writes there): such nodes move to com.microsoft (imported
/// at version 1 if the model does not import it), where the checker leaves them to vkc's passes.
void adopt_onnxruntime_onnx_domain_ops(onnx::ModelProto& model);

/// Runs the ONNX checker (external data resolved in `model_dir`) on models whose IR version
/// this libonnx knows; it rejects newer ones outright, so those are not checked.
void run_onnx_checker(onnx::ModelProto& model, const std::filesystem::path& model_dir);

/// Every node input (in subgraphs too, which may read the enclosing graphs' values) names a graph
/// input, an initializer or an earlier node's output, and every node has an output: ONNX's shape
/// inference assumes both and can crash otherwise, and the checker does not run on IR versions
/// newer than the library's; and every input its ONNX schema (at `onnx_opset`) requires is given. `names`
/// are the graph's node names (unique_node_names).
void check_structure(const onnx::GraphProto& graph, const std::vector<std::string>& names, int64_t onnx_opset);

}  // namespace vkc::compiler::detail
