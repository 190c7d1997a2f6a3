// The compile pipeline end to end: import -> passes -> partition -> serialize.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "vkc/ir/graph.h"
#include "vkc/partitioner/device_profile.h"
#include "vkc/partitioner/partition.h"
#include "vkc/passes/pass.h"
#include "vkc/passes/quantize.h"
#include "vkc/serializer/compile_options.h"

namespace vkc::compiler {

/// The phases of a compile, in order.
inline constexpr const char* kPhases[] = {"import", "passes", "partition", "build", "write"};
inline constexpr size_t kNumPhases = std::size(kPhases);

struct PhaseEvent {
  size_t index = 0;      // into kPhases
  bool finished = false;  // false: the phase starts; true: it ended after `seconds`
  double seconds = 0;
  /// An update within the phase (`finished` false): `bytes_done` of `bytes_total` constant bytes
  /// hashed (build) or file bytes written (write). Updates come from worker threads too, one at a
  /// time, about every 32 MiB.
  bool update = false;
  uint64_t bytes_done = 0, bytes_total = 0;
};

struct CompileConfig {
  /// Options that travel inside every delegate payload (CompileSpecs).
  serializer::CompileOptions options;
  /// --input-shape NAME=1x3x224x224
  std::map<std::string, std::vector<int64_t>> input_shapes;
  /// --dim NAME=VALUE: a named symbolic dim, fixed everywhere it appears.
  std::map<std::string, int64_t> dims;
  /// --dim NAME=V1,V2,...: several sizes of a named dim; the model is compiled for each (each
  /// combination, over several dims) and the program picks by its inputs' shapes as it runs.
  std::map<std::string, std::vector<int64_t>> dim_sizes;
  /// --dim NAME=MIN..MAX: one program whose graph resizes as it runs for every size of the dim in
  /// the range (compiler/src/dynamic_programs.h).
  std::map<std::string, std::pair<int64_t, int64_t>> dim_ranges;
  /// --input-value NAME=V[,V...]: the input becomes a constant (the program no longer takes it).
  std::map<std::string, std::string> input_values;
  /// --max-seq-len N: a decode-step graph's concat-style KV cache becomes a static cache of N
  /// positions kept inside the program (passes/src/use_kv_cache.cpp); 0: off.
  int64_t max_seq_len = 0;
  /// --encoder FILE.onnx (with --max-seq-len): the model is an encoder-decoder's decoder step and
  /// this its encoder; the program gets an "encoder" method computing the step's context inputs
  /// (compiler/src/encoder_decoder.h, docs/encoder-decoder.md). Empty: none.
  std::filesystem::path encoder;
  /// --bos ID, --eos ID[,ID...]: the token ids a KV-cache program's metadata methods report
  /// (ExecuTorch's LLM runner); unset: read from the model's JSON files beside it.
  std::optional<int64_t> bos_id;
  std::vector<int64_t> eos_ids;
  /// Print the graph after this pass ("all" for every pass) through `ir_dump`.
  std::string dump_ir_after;
  std::function<void(const std::string& pass, const std::string& text)> ir_dump;
  /// --skip-pass NAME: optional passes (fusions, clean-ups) not to run.
  std::vector<std::string> skip_passes;
  /// The GPU to partition for (limits and features); none: ET-VK's defaults.
  std::optional<partitioner::DeviceProfile> device;
  /// Nodes no delegate can take run as ExecuTorch portable-kernel calls instead of failing the compile.
  bool cpu_fallback = false;
  /// Store the SPIR-V of the shader variants each delegate uses in its payload (VkGraph.shaders).
  bool embed_shaders = true;
  /// Called with the partitioned graph, its decisions, the limits used and what became of each
  /// attention, before a compile fails on rejected nodes or goes on (reports are written
  /// from here).
  std::function<void(const ir::Graph&, const partitioner::Partition&, const partitioner::DeviceLimits&,
                     const std::vector<passes::PassContext::AttentionDecision>&)>
      on_partition;
  /// Called as each phase (kPhases) starts and ends.
  std::function<void(const PhaseEvent&)> on_phase;
  /// --quantize RECIPE (empty: none; passes::parse_quant_recipe) and --quantize-exclude GLOBs.
  std::string quantize;
  std::vector<std::string> quantize_exclude;
  /// --quantize-min-elements N: smaller linears stay in floating point.
  int64_t quantize_min_elements = passes::kMinQuantizedElements;
  /// Quantized bytes held in memory while compiling (passes::QuantConfig::kept_packed_bytes).
  int64_t quantize_kept_packed_bytes = passes::kKeptPackedBytes;
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
  size_t embedded_shaders = 0;  // distinct variants over all delegates
  /// Operators no shader variant implements, "op (dtype, storage/layout)" (only when embedding).
  std::vector<std::string> operators_without_shaders;
  uint64_t output_bytes = 0;
  uint64_t external_bytes = 0;  // the .ptd's, when the sink has one
  /// Wall time per phase, in order: import, passes, partition, build (the Program), write.
  std::vector<std::pair<std::string, double>> phase_seconds;
  /// Wall time of each pass, in pipeline order.
  std::vector<std::pair<std::string, double>> pass_seconds;
  /// Every layer quantize-weights considered (empty without --quantize).
  std::vector<passes::QuantLayerReport> quantized_layers;
  /// What the passes decided that the user should hear of (PassContext::notes).
  std::vector<std::string> notes;
  /// The compiled graph, kept alive because `partition` points into it.
  std::shared_ptr<const ir::Graph> graph;
  partitioner::Partition partition;
};

/// The device limits the options select: texture_limits > small_texture_limits > the device
/// profile > ET-VK's defaults. The buffer limit comes from the device when there is one.
partitioner::DeviceLimits limits_for(const serializer::CompileOptions& o,
                                     const std::optional<partitioner::DeviceProfile>& device = std::nullopt);

/// Where a compile reads the model: a file, or a serialized ModelProto whose external data
/// is resolved against `base_dir` (empty: external data is refused). `bytes` must outlive the compile.
struct ModelSource {
  std::filesystem::path file;
  std::span<const uint8_t> bytes;
  std::filesystem::path base_dir;
  bool in_memory = false;
};

/// Where a compile writes the .pte: `file` (through a temporary file that is renamed), or
/// `*bytes` when set.
struct PteSink {
  std::filesystem::path file;
  std::vector<uint8_t>* bytes = nullptr;
  /// The constants in ExecuTorch's external data file (.ptd) instead of the .pte: written to
  /// `ptd_file` (before the .pte; removed again if the .pte cannot be written) or into `ptd_bytes`.
  std::filesystem::path ptd_file;
  std::vector<uint8_t>* ptd_bytes = nullptr;
};

/// The pipeline every entry point runs: import, passes, partition, build, write. Throws
/// CompileError (or the importer's ImportError) with one line on failure; a file sink is then untouched.
CompileStats compile(const ModelSource& model, const PteSink& out, const CompileConfig& config);

/// Compiles `model` into `out` (written to a temporary file and renamed). Throws
/// CompileError (or the importer's ImportError) with one line on failure; `out` is then untouched.
CompileStats compile_file(const std::filesystem::path& model, const std::filesystem::path& out,
                          const CompileConfig& config, const std::filesystem::path& external_weights = {});

}  // namespace vkc::compiler
