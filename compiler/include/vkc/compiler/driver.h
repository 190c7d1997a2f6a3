// The compile pipeline end to end: import -> passes -> partition -> serialize.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "vkc/ir/graph.h"
#include "vkc/partitioner/partition.h"
#include "vkc/serializer/compile_options.h"

namespace vkc::compiler {

struct CompileConfig {
  /// Options that travel inside every delegate payload (CompileSpecs).
  serializer::CompileOptions options;
  /// --input-shape NAME=1x3x224x224
  std::map<std::string, std::vector<int64_t>> input_shapes;
  /// Print the graph after this pass ("all" for every pass) through `ir_dump`.
  std::string dump_ir_after;
  std::function<void(const std::string& pass, const std::string& text)> ir_dump;
  /// Called with the partition decisions before a compile fails on rejected nodes or goes on.
  std::function<void(const partitioner::Partition&)> on_partition;
};

/// A compile that cannot produce a program; the message is one line.
struct CompileError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct CompileStats {
  size_t onnx_nodes = 0;
  size_t runtime_nodes = 0;  // nodes in delegates, incl. prepack/transition nodes
  size_t delegates = 0;
  size_t named_data = 0;
  uint64_t output_bytes = 0;
  /// Wall time per phase, in order: import, passes, partition, build (the Program), write.
  std::vector<std::pair<std::string, double>> phase_seconds;
  /// The compiled graph, kept alive because `partition` points into it.
  std::shared_ptr<const ir::Graph> graph;
  partitioner::Partition partition;
};

/// The device limits the options select: texture_limits > small_texture_limits > default.
partitioner::DeviceLimits limits_for(const serializer::CompileOptions& o);

/// Compiles `model` into `out` (written to a temporary file and renamed). Throws
/// CompileError (or the importer's ImportError) with one line on failure; `out` is then untouched.
CompileStats compile_file(const std::filesystem::path& model, const std::filesystem::path& out,
                          const CompileConfig& config);

}  // namespace vkc::compiler
