// assume-unpadded-mask: under --max-seq-len N, a decode step exported with an attention mask beside
// its tokens and positions (as optimum and the onnx-community models write decoders:
// attention_mask [batch, past + sequence], 1 where a position holds a token, 0 at padding) takes
// that mask as all ones, a constant, and the program no longer takes it. The program keeps one
// sequence (batch 1) whose cache holds every position up to the current one, so no position is
// padding: the mask's only effect is then the causal one that the graph computes beside it, which
// folding makes constant and use-kv-cache checks and drops. The mask is the integer or bool graph
// input of shape [1, N] (the past is fixed to N - S, so past + sequence is N; tokens and positions
// are [1, S], S < N); a note names it.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "vkc/passes/passes.h"

namespace vkc::passes {

void assume_unpadded_mask(ir::Graph& g, PassContext& ctx) {
  if (ctx.max_seq_len <= 0) return;
  const int64_t n = ctx.max_seq_len;
  std::vector<ir::Value*> masks;
  for (ir::Value* in : g.inputs) {
    const ir::DType t = in->dtype();
    if (!in->type().known() || !(ir::is_integer(t) || t == ir::DType::Bool)) continue;
    const auto sizes = in->shape().sizes();
    if (sizes.size() == 2 && sizes[0] == 1 && sizes[1] == n) masks.push_back(in);
  }
  for (ir::Value* mask : masks) {
    const size_t width = ir::dtype_size(mask->dtype());
    std::vector<uint8_t> bytes(static_cast<size_t>(n) * width, 0);
    for (int64_t i = 0; i < n; ++i) bytes[static_cast<size_t>(i) * width] = 1;  // 1 in little-endian
    ir::Value* ones = g.add_constant(g.unique_name(mask->name() + "_ones"), mask->type(),
                                     ir::TensorData::owned(std::move(bytes)));
    g.replace_all_uses(mask, ones);
    g.inputs.erase(std::find(g.inputs.begin(), g.inputs.end(), mask));
    ctx.notes.push_back(fmt::format("--max-seq-len: input '{}' {} is taken as an attention mask of all ones (one "
                                    "sequence, no padding); the program does not take it",
                                    mask->name(), mask->type().str()));
  }
}

}  // namespace vkc::passes
