// vkc::CompileOptions: every option of `vkc compile`, as one value type.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "vkc/serializer/compile_options.h"

namespace vkc {

/// A compile spec (key, bytes) as stored in BackendDelegate.compile_specs.
using CompileSpec = serializer::CompileSpec;
/// Texture extent limits (x, y, z) the partitioner fits tensors into.
using TextureLimits = serializer::TextureLimits;

/// What a compile does. Defaults give `vkc compile MODEL -o OUT` with no options.
/// Fields that travel in the delegate payload are optional: unset means "absent from the
/// CompileSpec list" (ET-VK then uses its default), exactly as the CLI does.
struct CompileOptions {
  /// --input-shape NAME=1x3x224x224: fixes a graph input's dims (and its symbols everywhere).
  std::map<std::string, std::vector<int64_t>> input_shapes;
  /// --dim NAME=VALUE: fixes a named symbolic dim (e.g. "sequence") in every input and value.
  std::map<std::string, int64_t> dims;
  /// --dim NAME=V1,V2,...: several sizes of a named dim (not also in `dims`); the model is
  /// compiled for each (each combination, over several dims; at most 8) and the program picks the
  /// one its inputs' shapes match as it runs.
  std::map<std::string, std::vector<int64_t>> dim_sizes;
  /// --dim NAME=MIN..MAX: a bounded dynamic dim (not also in `dims` or `dim_sizes`): one program
  /// whose inputs may take any size of the dim in [MIN, MAX] (MIN < MAX); its graph resizes as it
  /// runs, in vkc's runtime and in ExecuTorch's (docs/options.md).
  std::map<std::string, std::pair<int64_t, int64_t>> dim_ranges;
  /// --input-value NAME=V[,V...]: binds a graph input to constant values (comma-separated, in the
  /// input's element type); what depends on it folds, and the program no longer takes it.
  std::map<std::string, std::string> input_values;
  /// --max-seq-len N: keep a decode-step graph's KV cache inside the program, N positions long
  /// (docs/llm.md); 0: off.
  int64_t max_seq_len = 0;
  /// --encoder FILE.onnx (with max_seq_len): the model is an encoder-decoder's decoder step and this
  /// its encoder; the program gets an "encoder" method that computes the step's context inputs
  /// (docs/encoder-decoder.md). Empty: none.
  std::filesystem::path encoder;
  /// --bos ID, --eos ID[,ID...]: the BOS and EOS ids a KV-cache program reports to ExecuTorch's LLM
  /// runner (its metadata methods); unset: read from generation_config.json, config.json,
  /// genai_config.json or the tokenizer beside the model.
  std::optional<int64_t> bos_id;
  std::vector<int64_t> eos_ids;

  // ---- Payload options (CompileSpecs), see docs/options.md.
  /// --small-texture-limits: partition for texture limits 2048,2048,2048.
  std::optional<bool> small_texture_limits;
  /// --texture-limits X,Y,Z: wins over small_texture_limits.
  std::optional<TextureLimits> texture_limits;
  /// --skip-memory-planning: every tensor keeps its own memory.
  std::optional<bool> skip_memory_planning;
  /// --force-fp16: fp32 tensors run as fp16 on the GPU.
  std::optional<bool> force_fp16;
  /// CompileSpecs the CLI has no flag for (e.g. downcast_64_bit), carried verbatim; they are
  /// decoded and honoured like the fields above. Keys of the fields above do not belong here.
  std::vector<CompileSpec> other_specs;

  // ---- Debugging.
  /// --dump-ir-after PASS|all: the IR text after that pass is returned in CompileResult::ir_dumps.
  std::string dump_ir_after;
  /// --skip-pass NAME (repeatable): optional passes (fusions, clean-ups) not to run, e.g. to compare
  /// a fused program with the unfused one. Unknown or required passes are error diagnostics.
  std::vector<std::string> skip_passes;

  // ---- Partitioning.
  /// --device NAME: a built-in device profile (partitioner/profiles/NAME.yaml) whose limits and
  /// features the partitioner honours; the texture options above still win over its limits.
  std::optional<std::string> device_profile;
  /// --fallback cpu: nodes no delegate can take run as ExecuTorch portable-kernel calls.
  bool cpu_fallback = false;
  /// --no-embed-shaders sets this false: the payloads then carry no SPIR-V (VkGraph.shaders).
  bool embed_shaders = true;
  /// --external-weights FILE.ptd: the program's constants go to ExecuTorch's external data file
  /// FILE.ptd (FlatTensor), which ExecuTorch's runtime and `vkc run` load beside the .pte; the
  /// .pte keeps the graph. A compile to memory returns the file's bytes in CompileResult::ptd
  /// (any non-empty value). Empty: the constants stay in the .pte.
  std::string external_weights;

  // ---- Quantization (docs/options.md "Quantization").
  /// --quantize RECIPE: 8da4w[:G], int4-weight-only[:G], int8-weight-only, with optional -fp16 and
  /// -embedding suffixes. An unknown recipe is an error diagnostic.
  std::optional<std::string> quantization_recipe;
  /// --quantize-exclude GLOB: layers whose node or weight name matches stay in floating point.
  std::vector<std::string> quantize_exclude;
  /// --quantize-min-elements N: linears with fewer weight elements stay in floating point (16384).
  int64_t quantize_min_elements = 16384;

  /// The payload options as the serializer's struct (other_specs decoded and merged in).
  /// Returns nullopt and sets `*error` when other_specs is malformed or repeats a modelled key.
  std::optional<serializer::CompileOptions> payload_options(std::string* error = nullptr) const;
  /// The CompileSpec list every delegate of the program carries, in the serializer's key order.
  /// Returns nullopt and sets `*error` as payload_options does.
  std::optional<std::vector<CompileSpec>> to_compile_specs(std::string* error = nullptr) const;
  /// The options a CompileSpec list encodes (e.g. read back by vkc::inspect). Non-payload
  /// fields stay at their defaults. Returns nullopt and sets `*error` on a malformed list.
  static std::optional<CompileOptions> from_compile_specs(std::span<const CompileSpec> specs,
                                                          std::string* error = nullptr);
  /// The same, from the serializer's decoded struct.
  static CompileOptions from_payload_options(const serializer::CompileOptions& payload);

  bool operator==(const CompileOptions&) const = default;
};

}  // namespace vkc
