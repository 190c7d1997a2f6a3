// take-cache-branch: under --max-seq-len, a decoder exported with both of its forms in one graph
// (optimum's decoder_model_merged: If(use_cache_branch) over the step that extends the past caches
// and the first step that has none) takes the branch that reads the caches. The program keeps its
// cache inside and starts from an empty one, so that branch serves every call. The condition is a
// bool graph input of one element; the If outputs it selects (inlined by the importer as Where or
// vkc::IfSelect) whose then- and else-values differ in reading a past cache tell which value of it
// is the cache branch. The input becomes that constant (a note names it) before folding, which
// then keeps only that branch.
#include <fmt/format.h>

#include <algorithm>
#include <set>

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
