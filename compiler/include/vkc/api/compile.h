// vkc::compile: ONNX model -> ExecuTorch .pte, from a file or memory, to a file or memory.
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "vkc/api/diagnostic.h"
#include "vkc/api/options.h"
#include "vkc/api/progress.h"

namespace vkc {

/// Where one ONNX node went: a delegate, or why it was left out.
struct NodeReport {
  std::string name;
  std::string op;      // qualified op type after lowering ("aten.convolution.default", "Erf")
  int delegate = -1;   // index into PartitionReport::delegates; -1 when left out
  std::string reason;  // why it was left out
  bool operator==(const NodeReport&) const = default;
};

struct DelegateSummary {
  size_t nodes = 0;  // runtime nodes, incl. inserted prepack/transition nodes
  size_t inputs = 0, outputs = 0;
  int32_t memory_objects = 0;  // shared memory objects after planning
  bool operator==(const DelegateSummary&) const = default;
};

/// The partitioner's decisions (what `vkc compile -v` prints). Filled whenever the compile
/// got as far as partitioning, also when it then failed on rejected nodes.
/// What became of one attention (`vkc compile --report`'s "attention" list).
struct AttentionReport {
  std::string softmax;  // the Softmax node it was found at
  std::string form;     // "sdpa", "unfused"; under --max-seq-len "sdpa_with_kv_cache", "... update_cache ..."
  std::string why;      // why it was not fused, if it was not
};

struct PartitionReport {
  std::vector<NodeReport> nodes;  // every node of the lowered graph, in order
  std::vector<AttentionReport> attention;
  std::vector<DelegateSummary> delegates;
  size_t delegated = 0, rejected = 0;
  std::string device_limits;  // the limits partitioned for: "default", "small-texture", "texture_limits X,Y,Z"
};

struct CompileSummary {
  size_t onnx_nodes = 0;
  size_t runtime_nodes = 0;  // nodes in delegates
  size_t delegates = 0;
  size_t constants = 0;      // named data entries
  uint64_t output_bytes = 0;
  uint64_t external_bytes = 0;  // the .ptd's, with CompileOptions::external_weights
  /// Wall time per finished phase, in order ("import", "passes", "partition", "build", "write").
  std::vector<std::pair<std::string, double>> phase_seconds;
};

struct CompileResult {
  /// True when the program was written (or returned in `pte`); then no diagnostic is an error.
  bool ok = false;
  std::vector<Diagnostic> diagnostics;
  PartitionReport partition;
  CompileSummary summary;
  /// The .pte bytes, for the overloads that return them (empty otherwise or on failure).
  std::vector<uint8_t> pte;
  /// With CompileOptions::external_weights, the .ptd bytes for the overloads that return `pte`.
  std::vector<uint8_t> ptd;
  /// (pass, IR text) for CompileOptions::dump_ir_after.
  std::vector<std::pair<std::string, std::string>> ir_dumps;
  /// With CompileOptions::quantization_recipe, or imported quantization (MatMulNBits): the per-layer
  /// report `--quant-report` writes (JSON).
  std::string quant_report;

  explicit operator bool() const { return ok; }
  /// The first error's message; empty when ok.
  std::string error() const;
};

// Errors come back as diagnostics in the result: no exception escapes these functions,
// except std::bad_alloc when memory runs out. They keep no global state; any number of
// compiles may run concurrently on different threads. The same input and options give
// byte-identical output.

/// model file -> .pte file (written to a temporary file and renamed; on failure `out` is untouched).
/// External data is resolved relative to the model's directory.
CompileResult compile(const std::filesystem::path& model, const std::filesystem::path& out,
                      const CompileOptions& options = {}, const ProgressCallback& progress = {});

/// model file -> .pte bytes in CompileResult::pte.
CompileResult compile(const std::filesystem::path& model, const CompileOptions& options = {},
                      const ProgressCallback& progress = {});

/// serialized ModelProto -> .pte bytes in CompileResult::pte. External data is resolved
/// relative to `base_dir`; an empty `base_dir` refuses models with external data.
CompileResult compile(std::span<const uint8_t> model, const std::filesystem::path& base_dir,
                      const CompileOptions& options = {}, const ProgressCallback& progress = {});

/// The diagnostics an options value gives before any model is read: unsupported options
/// (device profile, quantization recipe), malformed other_specs, conflicting limits (a warning).
std::vector<Diagnostic> check_options(const CompileOptions& options);

}  // namespace vkc
