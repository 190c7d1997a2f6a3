// split-packed-cache: under --max-seq-len, a KV cache that a graph passes as one tensor holding
// the keys and the values (onnxruntime's Attention as its transformer optimizer writes GPT-2: past
// [2, B, H, P, D] in, present [2, B, H, P + S, D] out) becomes the pair of rank-4 caches the cache
// passes find (kv_cache_pairs.h). After expand-microsoft-ops such a graph reads the past as
// Gather(past, 0 | 1, axis 0) and writes the present as Concat(Unsqueeze(keys, 0),
// Unsqueeze(values, 0), axis 0) of the two Concat(past half, new, axis 2) it extends. The past
// input becomes two inputs [B, H, P, D] that the halves' readers take instead, and the present
// output the two extended halves; use-kv-cache then keeps both inside the program, as for any
// other decoder (the program's inputs and outputs lose the caches either way). Any other use of a
// packed past or present leaves the graph as it was.
#include <fmt/format.h>

#include <algorithm>

#include "../constants.h"
#include "vkc/passes/passes.h"

namespace vkc::passes {
namespace {

// The half (0 keys, 1 values) that Gather `n` takes of a packed past on axis 0; -1 if none.
int half_of(const ir::Node* n, const ir::Value* past) {
  if (!n->is_onnx("Gather") || n->input(0) != past || n->attr_int("axis", 0) != 0) return -1;
  const auto index = constant_ints(n->input(1));
  if (!index || index->size() != 1 || n->input(1)->shape().rank() != 0 || (*index)[0] < 0 || (*index)[0] > 1) return -1;
  return static_cast<int>((*index)[0]);
}

// `v` = Unsqueeze(x, [0]): x; null otherwise.
ir::Value* unsqueezed(const ir::Value* v) {
  const ir::Node* u = v->producer();
  if (!u || !u->is_onnx("Unsqueeze") || u->num_inputs() < 2) return nullptr;
  const auto axes = constant_ints(u->input(1));
  return axes && *axes == std::vector<int64_t>{0} ? u->input(0) : nullptr;
}

struct Packed {
  ir::Value* past;
  std::vector<ir::Node*> gathers[2];  // by half
  ir::Value* present = nullptr;       // the graph output
  ir::Value* extended[2] = {};        // Concat(half, new, axis 2): keys, values
};

}  // namespace

void split_packed_cache(ir::Graph& g, PassContext& ctx) {
  if (ctx.max_seq_len <= 0) return;
  std::vector<Packed> found;
  for (ir::Value* in : g.inputs) {
    if (!in->type().known() || in->shape().rank() != 5 || in->shape().dims[0].value != 2 || !ir::is_float(in->dtype()))
      continue;
    Packed p{in, {}, nullptr, {}};
    bool only_halves = true;
    for (ir::Node* u : g.users(in)) {
      const int h = half_of(u, in);
      if (h < 0) only_halves = false;
      else p.gathers[h].push_back(u);
    }
    if (!only_halves || p.gathers[0].empty() || p.gathers[1].empty()) continue;
    // The present: a graph output stacking the two Concats that extend this past's halves.
    for (ir::Value* out : g.outputs) {
      // (Through the Identity that keeps the graph output's name when the operator is expanded.)
      const ir::Node* c = out->producer();
      if (c && c->is_onnx("Identity") && g.users(c->input(0)).size() == 1 && !g.is_output(c->input(0))) c = c->input(0)->producer();
      if (!c || !c->is_onnx("Concat") || c->num_inputs() != 2 || c->attr_int("axis", 0) != 0) continue;
      ir::Value* halves[2] = {unsqueezed(c->input(0)), unsqueezed(c->input(1))};
      bool extends = true;
      for (int h = 0; h < 2 && extends; ++h) {
        const ir::Node* e = halves[h] ? halves[h]->producer() : nullptr;
        extends = e && e->is_onnx("Concat") && e->num_inputs() == 2 && (e->attr_int("axis", 0) == 2 || e->attr_int("axis", 0) == -2) &&
                  std::any_of(p.gathers[h].begin(), p.gathers[h].end(), [&](const ir::Node* gn) { return gn->output(0) == e->input(0); });
      }
      if (!extends) continue;
      // Nothing else may read the stacked present or its halves' stacking.
      if (!g.users(out).empty() || g.users(c->input(0)).size() != 1 || g.users(c->input(1)).size() != 1) continue;
      p.present = out, p.extended[0] = halves[0], p.extended[1] = halves[1];
      break;
    }
    if (p.present) found.push_back(std::move(p));
  }
  for (Packed& p : found) {
    const auto at = std::find(g.inputs.begin(), g.inputs.end(), p.past);
    const auto s = p.past->shape().dims;
    ir::TensorType half_type = p.past->type();
    half_type.shape.dims = {s[1], s[2], s[3], s[4]};
    ir::Value* halves[2] = {g.add_value(g.unique_name(p.past->name() + "_key"), half_type),
                            g.add_value(g.unique_name(p.past->name() + "_value"), half_type)};
    for (int h = 0; h < 2; ++h)
      for (ir::Node* gn : p.gathers[h]) {
        g.replace_all_uses(gn->output(0), halves[h]);
        g.remove_node(gn);
      }
    const size_t i = static_cast<size_t>(at - g.inputs.begin());
    g.inputs.erase(at);
    g.inputs.insert(g.inputs.begin() + static_cast<std::ptrdiff_t>(i), {halves[0], halves[1]});
    const auto out = std::find(g.outputs.begin(), g.outputs.end(), p.present);
    const size_t o = static_cast<size_t>(out - g.outputs.begin());
    ir::Node* stack = p.present->producer();
    if (stack->is_onnx("Identity")) {
      g.remove_node(stack);
      stack = stack->input(0)->producer();
    }
    std::vector<ir::Node*> lifts = {stack->input(0)->producer(), stack->input(1)->producer()};
    g.outputs.erase(out);
    g.outputs.insert(g.outputs.begin() + static_cast<std::ptrdiff_t>(o), {p.extended[0], p.extended[1]});
    g.remove_node(stack);
    for (ir::Node* l : lifts) g.remove_node(l);
    ctx.notes.push_back(fmt::format("--max-seq-len: the packed cache '{}' / '{}' ([2, B, H, P, D]: keys and values in "
                                    "one tensor) is kept as a pair of caches inside the program",
                                    p.past->name(), p.present->name()));
  }
  if (!found.empty()) g.compact();
}

}  // namespace vkc::passes
