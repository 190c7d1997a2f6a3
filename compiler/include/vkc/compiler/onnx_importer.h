// ONNX model (.onnx protobuf, optionally with external data files) -> vkc IR.
//
// The importer parses the model, validates it (the ONNX checker for IR <= 8,
// vkc's own checks for what it relies on), fixes input shapes on request, runs
// ONNX shape inference and builds an ir::Graph in which every value carries
// the inferred TensorType. Initializer bytes are not copied where avoidable:
// raw_data is viewed inside the parsed protobuf and external data inside a
// memory mapping, both kept alive through Graph::keepalive.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <set>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "vkc/ir/graph.h"

namespace vkc::compiler {

struct ImportOptions {
  /// Graph input name -> dims (--input-shape NAME=1x3x224x224). Fixes the input's symbolic
  /// dims, and every other use of the same symbols, before shape inference.
  std::map<std::string, std::vector<int64_t>> input_shapes;
  /// Symbolic dim name -> size (--dim NAME=VALUE): fixes that dim in every input, output and
  /// value it appears in.
  std::map<std::string, int64_t> dims;
  /// Graph input name -> comma-separated values (--input-value sr=16000): the input becomes a
  /// constant of those values before shape inference, so what depends on it folds.
  std::map<std::string, std::string> input_values;
  /// --max-seq-len N: the symbolic cache-length dim of past inputs (those a graph output
  /// concatenates with new positions) is fixed to N - S (S: the tokens per call), so the presents hold N positions.
  int64_t kv_cache_len = 0;
  /// Non-null: a --dim that no input of this graph names is added here instead of failing the
  /// import (an encoder-decoder's two graphs share the --dim list; the caller checks each names one).
  std::set<std::string>* unmatched_dims = nullptr;
};

/// One line naming the problem: the model, then the node / initializer / input concerned.
struct ImportError : std::runtime_error {
  using runtime_error::runtime_error;
};

/// Imports a model file. External data is resolved relative to the file's directory.
std::unique_ptr<ir::Graph> import_onnx_file(const std::filesystem::path& model, const ImportOptions& options = {});

/// Imports a serialized ModelProto. External data is resolved relative to `base_dir`;
/// an empty `base_dir` refuses external data.
std::unique_ptr<ir::Graph> import_onnx_bytes(std::span<const uint8_t> bytes, const std::filesystem::path& base_dir,
                                             const ImportOptions& options = {});

}  // namespace vkc::compiler
