// remove-identity: Identity, a Concat of one input (the legacy exporter wraps cache inputs so), a
// Cast to the dtype its input has,
// and Dropout that passes its input through (inference mode, or a
// ratio of 0) are dropped; a used Dropout mask becomes a constant of all true. A pass-through
// from a graph input straight to a graph output stays (lowered to a copy).
#include "vkc/passes/passes.h"

namespace vkc::passes {
namespace {

bool constant_zero(const ir::Value* v) {
  if (!v || !v->is_constant() || v->shape().numel() != 1) return false;
  const auto bytes = v->data().bytes();
  for (uint8_t b : bytes)
    if (b != 0) return false;  // 0 and 0.0 (and -0.0 aside) are all-zero bytes
  return true;
}

}  // namespace

bool dropout_passes_through(const ir::Node* n) {
  const ir::Value* training = n->num_inputs() > 2 ? n->input(2) : nullptr;
  if (!training || constant_zero(training)) return true;
  const ir::Value* ratio = n->num_inputs() > 1 ? n->input(1) : nullptr;
  return ratio && constant_zero(ratio);
}

void remove_identity(ir::Graph& g, PassContext&) {
  for (ir::Node* n : g.nodes()) {
    const bool dropout = n->is_onnx("Dropout");
    const bool single_concat = n->is_onnx("Concat") && n->num_inputs() == 1 && n->input(0);
    // A Cast to the dtype its input already has (the legacy exporter's .to(float32) around norms).
    const bool noop_cast = n->is_onnx("Cast") && n->input(0) && n->input(0)->type().known() &&
                           ir::dtype_from_onnx(n->attr_int("to", 0)) == n->input(0)->dtype();
    if (!n->is_onnx("Identity") && !single_concat && !noop_cast && !(dropout && dropout_passes_through(n))) continue;
    if (dropout && n->outputs().size() > 1 && n->output(1)) {  // the mask keeps every element
      ir::Value* mask = n->output(1);
      if (!g.users(mask).empty() || g.is_output(mask)) {
        if (!mask->type().known() || !mask->shape().is_static()) continue;
        ir::Value* ones = g.add_constant(g.unique_name(n->name() + "_mask"), mask->type(),
                                         ir::TensorData::owned(std::vector<uint8_t>(mask->shape().numel(), 1)));
        g.replace_all_uses(mask, ones);
      }
    }
    ir::Value* in = n->input(0);
    ir::Value* out = n->output(0);
    if (g.is_output(out) && (g.is_input(in) || g.is_output(in))) continue;  // keep a pass-through graph well-formed
    g.replace_all_uses(out, in);
    g.remove_node(n);
  }
}

}  // namespace vkc::passes
