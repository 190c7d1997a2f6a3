#include "kv_cache_pairs.h"

#include <fmt/format.h>

#include <algorithm>

#include "../constants.h"
#include "vkc/passes/pass.h"

namespace vkc::passes {
namespace {

// Whether Slice `n` passes its input through whole (same static shape, unit steps).
bool keeps_everything(const ir::Node* n) {
  const ir::Value *in = n->input(0), *out = n->output(0);
  if (!in || !in->type().known() || !out->type().known() || !in->shape().is_static() || in->shape() != out->shape())
    return false;
  if (n->num_inputs() < 5 || !n->input(4)) return true;
  auto steps = constant_ints(n->input(4));
  return steps && std::all_of(steps->begin(), steps->end(), [](int64_t v) { return v == 1; });
}

}  // namespace

std::map<const ir::Value*, CachePair> find_cache_pairs(const ir::Graph& g) {
  std::map<const ir::Value*, CachePair> pairs;  // by present
  for (ir::Node* n : g.nodes()) {
    if (!n->is_onnx("Concat") || n->num_inputs() != 2) continue;
    ir::Value* present = n->output(0);
    ir::Value* output = g.is_output(present) ? present : nullptr;
    for (ir::Node* u : g.users(present)) {
      // An If resolved to its branch keeps the graph output's name through an Identity.
      if (!output && u->is_onnx("Identity") && g.is_output(u->output(0))) output = u->output(0);
      if (!output && u->is_onnx("Slice") && u->input(0) == present && g.is_output(u->output(0))) {
        if (!keeps_everything(u))
          throw PassError(fmt::format("--max-seq-len: cache output '{}' keeps the last {} of its {} positions (a "
                                      "sliding window shorter than the cache): compile with a --max-seq-len of at "
                                      "most the window",
                                      u->output(0)->name(), u->output(0)->shape().sizes()[2], present->shape().sizes()[2]));
        output = u->output(0);
      }
    }
    if (!output || !present->type().known() || present->shape().rank() != 4) continue;
    const int64_t axis = n->attr_int("axis", 0);
    if (axis != 2 && axis != -2) continue;
    ir::Value* past = n->input(0);
    if (ir::Node* cut = past->producer(); cut && cut->is_onnx("Slice") && keeps_everything(cut)) past = cut->input(0);
    if (!g.is_input(past)) continue;
    pairs[present] = CachePair{past, present, output, n->input(1)};
  }
  return pairs;
}

}  // namespace vkc::passes
