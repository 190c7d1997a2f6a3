#include "vkc/passes/passes.h"

namespace vkc::passes {
namespace {

// Dropout passes its input through unless training_mode is set or its mask is used.
bool is_inference_dropout(const ir::Graph& g, const ir::Node* n) {
  if (n->outputs().size() > 1 && (!g.users(n->output(1)).empty() || g.is_output(n->output(1)))) return false;
  const ir::Value* training = n->input(2);
  if (!training) return true;
  return training->is_constant() && training->data().size() == 1 && training->data().data()[0] == 0;
}

}  // namespace

void remove_identity(ir::Graph& g, PassContext&) {
  for (ir::Node* n : g.nodes()) {
    if (!n->is_onnx("Identity") && !(n->is_onnx("Dropout") && is_inference_dropout(g, n))) continue;
    ir::Value* in = n->input(0);
    ir::Value* out = n->output(0);
    if (g.is_output(out) && (g.is_input(in) || g.is_output(in))) continue;  // keep a pass-through graph well-formed
    g.replace_all_uses(out, in);
    g.remove_node(n);
  }
}

}  // namespace vkc::passes
