// materialize-constant-outputs: a graph output that folding turned into a constant (a Shape, a
// mask computed from static sizes, ...) is produced by an aten.clone of that constant, so the
// program still computes every output (plan outputs cannot be constants).
#include "vkc/passes/passes.h"

namespace vkc::passes {

void materialize_constant_outputs(ir::Graph& g, PassContext&) {
  for (ir::Value*& out : g.outputs) {
    if (!out->is_constant()) continue;
    ir::Node* clone = g.add_node(ir::kVulkanDomain, "aten.clone.default", {out}, {out->type()},
                                 g.unique_name(out->name() + "_output"));
    out = clone->output(0);
  }
}

}  // namespace vkc::passes
