#include <unordered_set>

#include "vkc/passes/passes.h"

namespace vkc::passes {

void eliminate_dead_code(ir::Graph& g, PassContext&) {
  std::unordered_set<const ir::Value*> live(g.outputs.begin(), g.outputs.end());
  auto nodes = g.nodes();
  for (auto it = nodes.rbegin(); it != nodes.rend(); ++it) {
    ir::Node* n = *it;
    bool used = false;
    for (const ir::Value* o : n->outputs()) used = used || live.count(o);
    if (!used) {
      g.remove_node(n);
      continue;
    }
    for (const ir::Value* in : n->inputs())
      if (in) live.insert(in);
  }
}

}  // namespace vkc::passes
