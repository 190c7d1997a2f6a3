// Symbolic dims that the graph itself fixes. An exporter may name a dim that no input size can
// change: onnxruntime-genai's builder writes the cache's head size as `kv_cache_dim`, though
// GroupQueryAttention's head count and the query's width fix it. Operators that require two dims
// to be equal (Concat's other axes, MatMul's inner dims, the past caches of onnxruntime's attention
// operators against their head count and head size) are unified over the inferred shapes; a
// symbol that meets a size is solved.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>

namespace onnx {
class ModelProto;
}  // namespace onnx

namespace vkc::compiler::detail {

/// (graph input, axis) -> the symbol that dim had in the file, before --dim fixed any.
using InputSymbols = std::map<std::pair<std::string, int>, std::string>;

/// The symbols of the graph inputs' dims, as the file wrote them.
InputSymbols input_symbols(const onnx::ModelProto& model);

/// Solves the symbolic dims the graph determines, over the shapes inference gave (`model` after
/// infer_shapes). Returns symbol -> size for symbols not in `given` (--dim). A dim given with
/// --dim (`given`, located through `symbols`) that an operator's constraint contradicts is an
/// ImportError naming the node, the operator and the size the node needs.
std::map<std::string, int64_t> solve_symbolic_dims(const onnx::ModelProto& model, const InputSymbols& symbols,
                                                   const std::map<std::string, int64_t>& given);

}  // namespace vkc::compiler::detail
