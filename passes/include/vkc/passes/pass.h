// What every graph pass sees: the graph and the options that shape it.
#pragma once

#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "vkc/ir/graph.h"
#include "vkc/passes/quantize.h"

namespace vkc::passes {

struct PassContext {
  /// Run fp32 tensors as fp16 on the GPU (constants are converted by the serializer).
  bool force_fp16 = false;
  /// --quantize / --quantize-exclude (quantize-weights does nothing without a recipe).
  QuantConfig quant;
  /// Filled by quantize-weights: every candidate layer, quantized or not (with the reason).
  std::vector<QuantLayerReport> quant_report;
  /// Nodes lowering could not turn into a runtime operator, with the reason, by node name.
  std::map<std::string, std::string> not_lowered;
  /// Shape and integer arithmetic fold-constants left computed at run time, with why (an input
  /// without a static shape, a graph input, the folding size cap), by node name; lowering adds it to
  /// the reason of a node it cannot lower.
  std::map<std::string, std::string> not_folded;
  /// What the passes decided that a user should hear of (the CLI prints them on stderr), e.g. an If
  /// branch that cannot run with the compiled input shapes and was left out.
  std::vector<std::string> notes;
  /// --max-seq-len: the KV-cache length use-kv-cache builds the program for (0: off), and the number
  /// of attention layers it moved onto the cache.
  int64_t max_seq_len = 0;
  /// --dim NAME=MIN..MAX: one program for every size in the range; what a pass adds may not depend on
  /// the resizing sizes except as a prefix of its largest form.
  bool sizes_resize = false;
  /// The widest 3-D texture (texels along x) the compile partitions for; ops that must use
  /// textures avoid tensors wider than this.
  int64_t max_texture_width = 16384;
  size_t kv_cache_layers = 0;
  /// What became of each attention (a Softmax over the last axis of [B, H, S, L] scores): fused into
  /// et_vk.sdpa or not (and why not), and under --max-seq-len how its cache is kept. `vkc compile
  /// --report` lists them.
  struct AttentionDecision {
    std::string node;  // the Softmax
    std::string sdpa;  // the et_vk.sdpa it was fused into
    std::string form;  // "sdpa", "unfused", then under --max-seq-len "sdpa_with_kv_cache", "update_cache ..."
    std::string why;   // for "unfused": the pattern's first mismatch
  };
  std::vector<AttentionDecision> attention;
  /// Set by keep-cache-positions: the input_pos input it made for a graph that computes its
  /// positions from the cache length (use-kv-cache then keeps it as the program's second input);
  /// after use-kv-cache, the program's input_pos in every case.
  ir::Value* kv_input_pos = nullptr;
  /// Set by use-kv-cache: the tokens a call takes (S; input_pos is then in [0, max_seq_len - S]).
  int64_t kv_step_tokens = 0;
  /// Wall time of each pass run, in pipeline order (filled by run_pipeline).
  std::vector<std::pair<std::string, double>> pass_seconds;
};

/// A pass that cannot proceed. The message names the node; the pipeline adds the pass name.
struct PassError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

using PassFn = void (*)(ir::Graph&, PassContext&);

struct PassInfo {
  std::string_view name;     // kebab-case, as --dump-ir-after takes it
  std::string_view summary;  // one line, as --print-pipeline shows it
  PassFn run;
  bool required = false;     // the compile needs it: --skip-pass refuses it
};

}  // namespace vkc::passes
