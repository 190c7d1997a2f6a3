// take-cache-branch: under --max-seq-len, a decoder exported with both of its forms in one graph
// (optimum's decoder_model_merged: If(use_cache_branch) over the step that extends the past caches
// and the first step that has none) takes the branch that reads the caches. The program keeps its
// cache inside and starts from an empty one, so that branch serves every call. The condition is a
// bool graph input of one element; the If outputs it selects (inlined by the importer as Where or
// vkc::IfSelect) whose then- and else-values differ in reading a past cache tell which value of it
// is the cache branch. The input becomes that constant (a note names it) before folding, which
// then keeps only that branch. A cache the merged decoder only passes along (an encoder-decoder's
// cross-attention keys and values) is computed from what the branch without caches makes it of.
#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <string_view>
#include <utility>

#include "vkc/passes/passes.h"

namespace vkc::passes {
namespace {

// Whether `v`'s cone reads one of `pasts`.
bool reads(const ir::Value* v, const std::set<const ir::Value*>& pasts) {
  std::vector<const ir::Value*> todo = {v};
  std::set<const ir::Value*> seen;
  while (!todo.empty()) {
    const ir::Value* x = todo.back();
    todo.pop_back();
    if (!x || !seen.insert(x).second) continue;
    if (pasts.count(x)) return true;
    if (const ir::Node* n = x->producer())
      for (const ir::Value* in : n->inputs()) todo.push_back(in);
  }
  return false;
}

// The prefixes that pair a cache input with its output (optimum's past_key_values.X / present.X,
// and past_X / present_X).
constexpr std::pair<std::string_view, std::string_view> kPastPresent[] = {{"past_key_values.", "present."},
                                                                          {"past_", "present_"}};

// A cache the merged decoder passes between calls although nothing extends it (an encoder-decoder's
// cross-attention keys and values: past_key_values.i.encoder.* in, present.i.encoder.* out): the
// branch without caches computes its present from the other inputs (the encoder's output), the
// cache branch reads the past and outputs a dummy. The program then computes it from those inputs
// wherever the cache branch reads the past (--encoder moves that computation into the encoder
// method, run once per input), and neither the past input nor the present output stays.
void compute_cross_caches(ir::Graph& g, const ir::Value* cond, bool cache_side, const std::set<const ir::Value*>& pasts,
                          PassContext& ctx) {
  std::set<const ir::Value*> caches(pasts.begin(), pasts.end());  // every cache-like input: never read here
  for (const ir::Value* in : g.inputs)
    for (const auto& [past, present] : kPastPresent)
      if (in->name().rfind(past, 0) == 0) caches.insert(in);
  std::vector<std::string> moved;
  for (size_t o = 0; o < g.outputs.size();) {
    ir::Value* out = g.outputs[o];
    const ir::Node* sel = out->producer();
    const bool select = sel && (sel->is_onnx("Where") || sel->is(ir::kVkcDomain, "IfSelect")) && sel->input(0) == cond;
    ir::Value* past = nullptr;
    for (const auto& [p, q] : kPastPresent)
      if (select && !past && out->name().rfind(q, 0) == 0)
        if (ir::Value* v = g.find_value(std::string(p) + out->name().substr(q.size())); v && g.is_input(v)) past = v;
    ir::Value* computed = past ? sel->input(cache_side ? 2 : 1) : nullptr;
    // (The branch's value may keep the exporter's symbolic dims: its dtype and rank must agree.)
    const bool fits = computed && computed->type().known() && past->type().known() && computed->dtype() == past->dtype() &&
                      computed->shape().rank() == past->shape().rank();
    if (!fits || pasts.count(past) || reads(computed, caches)) {
      ++o;
      continue;
    }
    g.replace_all_uses(past, computed);
    g.inputs.erase(std::find(g.inputs.begin(), g.inputs.end(), past));
    g.outputs.erase(g.outputs.begin() + static_cast<std::ptrdiff_t>(o));
    moved.push_back(past->name());
  }
  if (moved.empty()) return;
  g.topo_sort();
  ctx.notes.push_back(fmt::format("--max-seq-len: {} cache input(s) that nothing extends ({}, ...: cross-attention keys and "
                                  "values) are computed from the inputs they were made of; the program takes the "
                                  "inputs instead",
                                  moved.size(), moved.front()));
}

}  // namespace

void take_cache_branch(ir::Graph& g, PassContext& ctx) {
  if (ctx.max_seq_len <= 0) return;
  std::set<const ir::Value*> pasts;  // rank-4 float inputs that a Concat extends
  for (const ir::Value* in : g.inputs) {
    if (!in->type().known() || in->shape().rank() != 4 || !ir::is_float(in->dtype())) continue;
    for (const ir::Node* u : g.users(in))
      if (u->is_onnx("Concat")) pasts.insert(in);
  }
  if (pasts.empty()) return;
  std::vector<ir::Value*> conditions;
  for (ir::Value* in : g.inputs)
    if (in->dtype() == ir::DType::Bool && in->type().known() && in->shape().numel() == 1) conditions.push_back(in);
  for (ir::Value* cond : conditions) {
    std::set<bool> cache_side;  // the condition's value whose branch reads the caches
    for (const ir::Node* u : g.users(cond)) {
      const bool select = u->is_onnx("Where") || u->is(ir::kVkcDomain, "IfSelect");
      if (!select || u->input(0) != cond) continue;
      const bool then_reads = reads(u->input(1), pasts), else_reads = reads(u->input(2), pasts);
      if (then_reads != else_reads) cache_side.insert(then_reads);
    }
    if (cache_side.size() != 1) continue;
    const bool value = *cache_side.begin();
    compute_cross_caches(g, cond, value, pasts, ctx);
    ir::Value* constant = g.add_constant(g.unique_name(cond->name() + "_cache_branch"), cond->type(),
                                         ir::TensorData::owned(std::vector<uint8_t>{static_cast<uint8_t>(value)}));
    g.replace_all_uses(cond, constant);
    g.inputs.erase(std::find(g.inputs.begin(), g.inputs.end(), cond));
    ctx.notes.push_back(fmt::format("--max-seq-len: input '{}' is {}: the branch that extends the KV cache (the "
                                    "program starts from an empty cache); the program does not take it",
                                    cond->name(), value ? "true" : "false"));
  }
}

}  // namespace vkc::passes
