// Greedy shared-object planning, as ET-VK plans (inputs and outputs included):
// walking the delegate in order, each tensor takes the lowest-numbered memory
// object that no live tensor holds. Inputs and outputs are live for the whole delegate
// (an input keeps its value through the call, so a runtime that runs the delegate again with an
// input unchanged may leave it in place: the decode loop's context inputs, an encoder-decoder's
// cross-attention keys and values); prepacked constants keep their own memory. The runtime sizes each object
// for the largest tensor bound to it. A view whose output only a clone (a layout
// transition, as before a linear) reads keeps its input's memory through that clone
// where the clone's output differs from it in shape, dtype or representation: the
// runtime runs the two as one dispatch (load-time epilogue fusion, vk_ops_copy.cpp),
// which reads the view's input while it writes the clone's output, and may do so in one
// memory object only element for element. Likewise a linear whose output only a view, an add or
// a mul reads (a decode step's projection split into heads, the residual add, SiLU(gate) * up:
// the GPU's matrix-vector kernel writes that operation's output), and attention over the cache
// whose output only a view reads (the heads merged). (Its other fusions are element for element.)
// Inputs read later than their node by a fused dispatch live until then: an rms_norm's input until
// the linears that run the norm, a rotary's until the attention that applies it.
#include <algorithm>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "steps.h"
#include "vkc/ir/op_registry.h"

namespace vkc::partitioner {

void plan_memory(Delegate& d) {
  const std::unordered_set<const ir::Value*> outputs(d.outputs.begin(), d.outputs.end());
  constexpr size_t kNever = SIZE_MAX;
  std::unordered_map<const ir::Value*, size_t> last_use;
  std::unordered_map<const ir::Value*, std::set<size_t>> readers;
  for (size_t i = 0; i < d.nodes.size(); ++i) {
    for (const ir::Value* v : d.nodes[i]->inputs())
      if (v) last_use[v] = i, readers[v].insert(i);
  }
  // A GPU runs apply_rotary_emb_hf inside the sdpa_with_kv_cache right after it (which may also
  // write the view after it), reading the rotary's inputs there: they live until then.
  // (select_as_symint, read on the host, may come between.)
  for (size_t i = 0; i + 1 < d.nodes.size(); ++i) {
    if (d.nodes[i]->op_type() != "et_vk.apply_rotary_emb_hf.default") continue;
    size_t a = i + 1;
    while (a < d.nodes.size() && d.nodes[a]->op_type() == "et_vk.select_as_symint.default") ++a;
    if (a >= d.nodes.size() || d.nodes[a]->op_type() != "sdpa_with_kv_cache.default") continue;
    const size_t until = a + 1 < d.nodes.size() && d.nodes[a + 1]->op_type() == "aten.view_copy.default" ? a + 1 : a;
    for (const ir::Value* v : d.nodes[i]->inputs())
      if (v && !v->is_constant() && last_use.count(v)) last_use[v] = std::max(last_use[v], until);
  }
  auto linear = [](const std::string& op) {
    return op == "aten.linear.default" || op == "et_vk.linear_q4gsw.default" ||
           op == "aten._weight_int8pack_mm.default" || op == "et_vk.linear_dq8ca_q4gsw.default";
  };
  // A GPU runs an rms_norm that only linears read inside them (their _norm variants read the
  // norm's input x as they run): x lives until the last of them (a decode step's final norm, whose
  // input nothing else reads, would otherwise give its memory to the head's output). An 8da4w
  // linear's row parameters (choose_qparams over the norm's output, read by linears alone) are
  // computed inside the linears too: such a choose_qparams counts as one of them.
  const auto only_linears_read = [&](const ir::Node* n) {
    for (const ir::Value* out : n->outputs()) {
      const auto it = readers.find(out);
      if (!out || outputs.count(out) || it == readers.end() ||
          !std::all_of(it->second.begin(), it->second.end(), [&](size_t r) { return linear(d.nodes[r]->op_type()); }))
        return false;
    }
    return true;
  };
  for (size_t i = 0; i < d.nodes.size(); ++i) {
    const ir::Node* n = d.nodes[i];
    if (n->op_type() != "et_vk.rms_norm.default" || n->outputs().size() != 1 || !n->input(0) ||
        n->input(0)->is_constant())
      continue;
    const ir::Value* y = n->output(0);
    const auto it = readers.find(y);
    if (outputs.count(y) || it == readers.end() || !std::all_of(it->second.begin(), it->second.end(), [&](size_t r) {
          const ir::Node* reader = d.nodes[r];
          return linear(reader->op_type()) ||
                 (reader->op_type() == "torchao.choose_qparams_affine.default" && only_linears_read(reader));
        }))
      continue;
    last_use[n->input(0)] = std::max(last_use[n->input(0)], *it->second.rbegin());
  }
  std::set<int32_t> free_ids;
  int32_t next_id = 0;
  std::unordered_map<size_t, std::vector<int32_t>> release_after;
  auto assign = [&](const ir::Value* v, size_t defined_at, bool whole_call = false) {
    int32_t id;
    if (!free_ids.empty()) {
      id = *free_ids.begin();
      free_ids.erase(free_ids.begin());
    } else {
      id = next_id++;
    }
    d.placement[v].mem_obj_id = id;
    if (whole_call || outputs.count(v)) return;
    auto lu = last_use.find(v);
    release_after[lu == last_use.end() ? defined_at : lu->second].push_back(id);
  };
  // Whether node i is a view read by the clone at i + 1 alone, whose output is not element for
  // element like the view's input (the case the fused dispatch cannot share memory in).
  auto same_form = [&](const ir::Value* a, const ir::Value* b) {
    const auto pa = d.placement.find(a), pb = d.placement.find(b);
    return pa != d.placement.end() && pb != d.placement.end() && a->type() == b->type() &&
           pa->second.rep.storage == pb->second.rep.storage && pa->second.rep.layout == pb->second.rep.layout;
  };
  auto keep_inputs_through_next = [&](size_t i) {
    if (i + 1 >= d.nodes.size() || d.nodes[i + 1]->outputs().empty()) return false;
    const std::string &op = d.nodes[i]->op_type(), &next = d.nodes[i + 1]->op_type();
    const bool reads_whole_input = linear(op) || op == "sdpa_with_kv_cache.default";
    if (!(op == "aten.view_copy.default" && next == "aten.clone.default") &&
        !(linear(op) && (next == "aten.view_copy.default" || next == "aten.add.Tensor" || next == "aten.mul.Tensor")) &&
        !(op == "sdpa_with_kv_cache.default" && next == "aten.view_copy.default"))
      return false;
    for (const ir::Value* out : d.nodes[i]->outputs()) {
      if (!out || outputs.count(out)) return false;
      const auto it = readers.find(out);
      if (it == readers.end() || it->second != std::set<size_t>{i + 1}) return false;
    }
    // A linear's (or attention's) kernel reads all of its input in every workgroup: no
    // element-for-element case.
    const ir::Value* next_out = d.nodes[i + 1]->outputs().front();
    for (const ir::Value* in : d.nodes[i]->inputs())
      if (in && !in->is_constant() && (reads_whole_input || !same_form(in, next_out))) return true;
    return false;
  };
  std::vector<int32_t> deferred;  // released after the next node, whatever that node does
  for (const ir::Value* v : d.inputs) assign(v, kNever, true);
  for (size_t i = 0; i < d.nodes.size(); ++i) {
    const ir::Node* n = d.nodes[i];
    if (n->op_type() != ir::kPrepackOp)  // prepacked constants keep their own memory
      for (const ir::Value* out : n->outputs()) assign(out, i);
    for (int32_t id : deferred) free_ids.insert(id);
    deferred.clear();
    if (keep_inputs_through_next(i)) deferred.swap(release_after[i]);
    else for (int32_t id : release_after[i]) free_ids.insert(id);
  }
  d.num_memory_objects = next_id;
}

}  // namespace vkc::partitioner
