// Greedy shared-object planning, as ET-VK plans (inputs and outputs included):
// walking the delegate in order, each tensor takes the lowest-numbered memory
// object that no live tensor holds. Inputs are live from the start, outputs to the
// end; prepacked constants keep their own memory. The runtime sizes each object
// for the largest tensor bound to it.
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
  for (size_t i = 0; i < d.nodes.size(); ++i) {
    for (const ir::Value* v : d.nodes[i]->inputs())
      if (v) last_use[v] = i;
  }
  std::set<int32_t> free_ids;
  int32_t next_id = 0;
  std::unordered_map<size_t, std::vector<int32_t>> release_after;
  auto assign = [&](const ir::Value* v, size_t defined_at) {
    int32_t id;
    if (!free_ids.empty()) {
      id = *free_ids.begin();
      free_ids.erase(free_ids.begin());
    } else {
      id = next_id++;
    }
    d.placement[v].mem_obj_id = id;
    if (outputs.count(v)) return;
    auto lu = last_use.find(v);
    release_after[lu == last_use.end() ? defined_at : lu->second].push_back(id);
  };
  for (const ir::Value* v : d.inputs) assign(v, kNever);
  for (size_t i = 0; i < d.nodes.size(); ++i) {
    const ir::Node* n = d.nodes[i];
    if (n->op_type() != ir::kPrepackOp)  // prepacked constants keep their own memory
      for (const ir::Value* out : n->outputs()) assign(out, i);
    for (int32_t id : release_after[i]) free_ids.insert(id);
  }
  d.num_memory_objects = next_id;
}

}  // namespace vkc::partitioner
