#include <map>

#include "steps.h"
#include "vkc/ir/op_registry.h"

namespace vkc::partitioner {

void insert_prepack(ir::Graph& g, Delegate& d) {
  std::map<const ir::Value*, ir::Value*> packed;  // constant -> its prepack output
  std::vector<ir::Node*> nodes;
  for (ir::Node* n : d.nodes) {
    const ir::OpDef* def = ir::find_op(n->op_type());
    for (size_t i = 0; i < n->inputs().size(); ++i) {
      ir::Value* c = n->input(i);
      if (!c || !c->is_constant() || def->prepacks(i)) continue;
      auto [it, fresh] = packed.try_emplace(c, nullptr);
      if (fresh) {
        ir::Node* p = g.add_node(ir::kVulkanDomain, ir::kPrepackOp, {c}, {c->type()}, g.unique_name(c->name() + "_prepack"), n);
        nodes.push_back(p);
        it->second = p->output(0);
      }
      n->set_input(i, it->second);
    }
    nodes.push_back(n);
  }
  d.nodes = std::move(nodes);
}

}  // namespace vkc::partitioner
