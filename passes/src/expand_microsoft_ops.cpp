// expand-microsoft-ops: the com.microsoft contrib operators onnxruntime's transformer optimizer
// writes into exported models, rewritten as the standard operators they compute (which the
// fusions and lowering then handle):
//   Gelu(x)                                   -> Gelu(x, approximate "none")
//   FastGelu(x [, bias])                      -> Gelu(x + bias, approximate "tanh")
//   BiasGelu(x, bias)                         -> Gelu(x + bias)
//   QuickGelu(x, alpha = 1.702)               -> x * Sigmoid(alpha * x)
//   SkipLayerNormalization(x, skip, gamma [, beta [, bias]])
//                                             -> LayerNormalization(x + skip [+ bias], gamma, beta)
//   SimplifiedLayerNormalization(x, scale)    -> et_vk.rms_norm(x, scale, epsilon)  (also in the ONNX domain)
//   SkipSimplifiedLayerNormalization(x, skip, gamma [, bias])
//                                             -> et_vk.rms_norm(x + skip [+ bias], gamma, epsilon)
// The skip forms' optional 4th output (the sum) is the Add's output. Nodes whose mean / inverse
// standard deviation outputs are read, or that normalize over another axis, stay and are reported.
#include <cstring>

#include "vkc/passes/passes.h"

namespace vkc::passes {
namespace {

bool contrib(const ir::Node* n, std::string_view op) { return n->is(ir::kMicrosoftDomain, op); }

// `v`'s type when known, else `like`'s (onnx's shape inference does not know contrib ops).
ir::TensorType type_or(const ir::Value* v, const ir::Value* like) { return v->type().known() ? v->type() : like->type(); }

ir::Value* onnx_op(ir::Graph& g, ir::Node* at, const char* op, std::vector<ir::Value*> ins, ir::TensorType t,
                   ir::AttributeMap attrs = {}, int64_t opset = 17) {
  ir::Node* n = g.add_node(ir::kOnnxDomain, op, std::move(ins), {std::move(t)}, g.unique_name(at->name() + "_" + op), at);
  n->attrs() = std::move(attrs);
  n->set_opset(opset);
  return n->output(0);
}

// Whether outputs [first, last) of n are absent or unread.
bool unread(const ir::Graph& g, const ir::Node* n, size_t first, size_t last) {
  for (size_t i = first; i < last && i < n->outputs().size(); ++i)
    if (n->output(i) && (g.is_output(n->output(i)) || !g.users(n->output(i)).empty())) return false;
  return true;
}

// x + skip [+ bias] for the skip normalizations; the sum also feeds output 3 when present.
ir::Value* skip_sum(ir::Graph& g, ir::Node* n, size_t bias_input) {
  const ir::TensorType t = type_or(n->output(0), n->input(0));
  ir::Value* s = onnx_op(g, n, "Add", {n->input(0), n->input(1)}, t);
  if (n->num_inputs() > bias_input && n->input(bias_input)) s = onnx_op(g, n, "Add", {s, n->input(bias_input)}, t);
  if (n->outputs().size() > 3 && n->output(3)) g.replace_all_uses(n->output(3), s);
  return s;
}

bool last_axis(const ir::Node* n) {
  const int64_t axis = n->attr_int("axis", -1);
  const ir::Value* x = n->input(0);
  return axis == -1 || (x->type().known() && axis == static_cast<int64_t>(x->shape().rank()) - 1);
}

void finish(ir::Graph& g, ir::Node* n, ir::Value* result) {
  g.replace_all_uses(n->output(0), result);
  g.remove_node(n);
}

}  // namespace

void expand_microsoft_ops(ir::Graph& g, PassContext&) {
  for (ir::Node* n : g.nodes()) {
    if (n->num_inputs() == 0 || !n->input(0)) continue;
    const ir::TensorType t = type_or(n->output(0), n->input(0));
    if (contrib(n, "Gelu")) {
      finish(g, n, onnx_op(g, n, "Gelu", {n->input(0)}, t, {{"approximate", std::string("none")}}, 20));
    } else if (contrib(n, "FastGelu") || contrib(n, "BiasGelu")) {
      ir::Value* x = n->input(0);
      if (n->num_inputs() > 1 && n->input(1)) x = onnx_op(g, n, "Add", {x, n->input(1)}, t);
      const std::string approx = contrib(n, "FastGelu") ? "tanh" : "none";
      finish(g, n, onnx_op(g, n, "Gelu", {x}, t, {{"approximate", approx}}, 20));
    } else if (contrib(n, "QuickGelu")) {
      std::vector<uint8_t> bytes(4);
      const float alpha = static_cast<float>(n->attr_float("alpha", 1.702));
      std::memcpy(bytes.data(), &alpha, 4);
      ir::Value* a = g.add_constant(g.unique_name(n->name() + "_alpha"), {ir::DType::Float32, ir::Shape::of({})},
                                    ir::TensorData::owned(std::move(bytes)));
      ir::Value* gate = onnx_op(g, n, "Sigmoid", {onnx_op(g, n, "Mul", {n->input(0), a}, t)}, t);
      finish(g, n, onnx_op(g, n, "Mul", {n->input(0), gate}, t));
    } else if (contrib(n, "SkipLayerNormalization") && unread(g, n, 1, 3)) {  // mean / inverse std unread
      ir::Value* s = skip_sum(g, n, 4);
      std::vector<ir::Value*> ins = {s, n->input(2)};
      if (n->num_inputs() > 3 && n->input(3)) ins.push_back(n->input(3));
      finish(g, n, onnx_op(g, n, "LayerNormalization", ins, t,
                           {{"axis", int64_t{-1}}, {"epsilon", n->attr_float("epsilon", 1e-12)}}));
    } else if ((contrib(n, "SimplifiedLayerNormalization") || n->is_onnx("SimplifiedLayerNormalization")) &&
               last_axis(n) && unread(g, n, 1, 2)) {
      ir::Node* r = g.add_node(ir::kVulkanDomain, "et_vk.rms_norm.default", {n->input(0), n->input(1)}, {t},
                               g.unique_name(n->name() + "_rms"), n);
      r->attrs() = {{"eps", n->attr_float("epsilon", 1e-5)}};
      finish(g, n, r->output(0));
    } else if (contrib(n, "SkipSimplifiedLayerNormalization") && unread(g, n, 1, 3)) {
      ir::Value* s = skip_sum(g, n, 3);
      ir::Node* r = g.add_node(ir::kVulkanDomain, "et_vk.rms_norm.default", {s, n->input(2)}, {t},
                               g.unique_name(n->name() + "_rms"), n);
      r->attrs() = {{"eps", n->attr_float("epsilon", 1e-5)}};
      finish(g, n, r->output(0));
    }
  }
}

}  // namespace vkc::passes
