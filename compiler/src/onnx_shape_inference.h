// Input shape overrides and ONNX shape inference on the parsed model.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "vkc/ir/attribute.h"

namespace onnx {
class GraphProto;
class ModelProto;
}  // namespace onnx

namespace vkc::compiler::detail {

/// Fixes the dims of the graph inputs named in `input_shapes`. A symbolic dim fixed this way is
/// fixed everywhere its symbol appears (other inputs, outputs, value_info), since ONNX gives one
/// symbol one size within a graph.
/// For --max-seq-len N: the symbolic dims that past caches (graph inputs a graph output Concat
/// extends along that dim) have there, set to N - S in `dims` (unless already given; S: dim 1 of the
/// integer [1, S] token/position inputs where they agree, else 1), and their symbolic batch dim to 1
/// (the program holds one sequence). Once S is known, an integer or
/// bool [1, L] input whose L is a symbol of its own (an attention mask, as the dynamo exporter
/// names it) gets L = N, the past and the new positions.
void fix_kv_cache_dims(const onnx::ModelProto& model, int64_t max_seq_len, std::map<std::string, int64_t>& dims);
void apply_input_shapes(onnx::ModelProto& model, const std::map<std::string, std::vector<int64_t>>& input_shapes,
                        const std::map<std::string, int64_t>& dims = {}, std::set<std::string>* unmatched = nullptr);

/// Copies external int32/int64 initializers of rank <= 1 (`initializers`: all of them, read) into
/// raw_data: shape inference reads such shape-like constants but cannot read external data.
void inline_external_shape_data(onnx::GraphProto& graph, const std::vector<ir::TensorAttr>& initializers);

/// Runs ONNX shape inference, which fills graph.value_info and refines the outputs. Nodes it
/// cannot infer (no schema, data it cannot see) keep whatever type information the file had.
/// Nodes are first given their IR names (`node_names`) so that its errors name them.
void infer_shapes(onnx::ModelProto& model, const std::vector<std::string>& node_names);

}  // namespace vkc::compiler::detail
