// Decomposed LayerNorm, as exporters write it over the last axis:
//   mean = ReduceMean(x); d = x - mean; var = ReduceMean(d * d | Pow(d, 2));
//   y = d / Sqrt(var + eps) [* gamma] [+ beta]
// becomes one LayerNormalization(x, gamma, beta, axis = -1, epsilon = eps).
#include <cmath>

#include "pattern_utils.h"
#include "vkc/passes/passes.h"

namespace vkc::passes {
namespace {

bool fuse_at(ir::Graph& g, ir::Node* mean) {
  if (!reduces_last_axis(mean)) return false;
  ir::Value* x = mean->input(0);
  if (!x->type().known() || !x->shape().is_static() || x->shape().rank() == 0) return false;
  // d = x - mean, used by the variance and by the division
  ir::Node* sub = nullptr;
  for (ir::Node* u : g.users(mean->output(0)))
    if (u->is_onnx("Sub") && u->input(0) == x && u->input(1) == mean->output(0)) sub = u;
  if (!sub || g.users(mean->output(0)).size() != 1) return false;
  ir::Value* d = sub->output(0);
  ir::Node* square = nullptr;
  ir::Node* div = nullptr;
  for (ir::Node* u : g.users(d)) {
    if ((u->is_onnx("Pow") && u->input(0) == d && constant_scalar(u->input(1)) == 2.0) ||
        (u->is_onnx("Mul") && u->input(0) == d && u->input(1) == d))
      square = u;
    else if (u->is_onnx("Div") && u->input(0) == d)
      div = u;
  }
  if (!square || !div || g.users(d).size() != 2) return false;
  ir::Node* var = sole_user(g, square->output(0), "ReduceMean");
  if (!reduces_last_axis(var)) return false;
  ir::Node* add_eps = sole_user(g, var->output(0), "Add");
  if (!add_eps) return false;
  auto eps = constant_scalar(other_operand(add_eps, var->output(0)));
  ir::Node* sqrt = eps ? sole_user(g, add_eps->output(0), "Sqrt") : nullptr;
  if (!sqrt || div->input(1) != sqrt->output(0) || g.users(sqrt->output(0)).size() != 1) return false;

  // Optional affine tail: * gamma, + beta (constants over the last axis).
  ir::Node* last = div;
  ir::Node* scale_mul = nullptr;
  ir::Value* gamma = nullptr;
  ir::Value* beta = nullptr;
  if (ir::Node* mul = sole_user(g, last->output(0), "Mul")) {
    ir::Value* c = other_operand(mul, last->output(0));
    if (c && c->is_constant() && c->shape().rank() == 1) {
      gamma = c;
      last = scale_mul = mul;
    }
  }
  if (ir::Node* add = sole_user(g, last->output(0), "Add")) {
    ir::Value* c = other_operand(add, last->output(0));
    if (c && c->is_constant() && c->shape().rank() == 1) {
      beta = c;
      last = add;
    }
  }
  const int64_t width = x->shape().dims.back().value.value_or(-1);
  if (width < 0 || x->dtype() != ir::DType::Float32) return false;
  if (!gamma) gamma = add_f32_constant(g, mean->name() + "_gamma", {width}, std::vector<float>(width, 1.0f));
  if (!beta) beta = add_f32_constant(g, mean->name() + "_beta", {width}, std::vector<float>(width, 0.0f));
  if (gamma->shape().sizes() != std::vector<int64_t>{width} || beta->shape().sizes() != std::vector<int64_t>{width})
    return false;
  // The last node of the chain becomes the LayerNormalization; the rest go.
  last->morph(ir::kOnnxDomain, "LayerNormalization", {x, gamma, beta},
              {{"axis", int64_t{-1}}, {"epsilon", *eps}});
  last->set_opset(17);
  for (ir::Node* n : {mean, sub, square, var, add_eps, sqrt, div, scale_mul})
    if (n && n != last) g.remove_node(n);
  return true;
}

}  // namespace

void fuse_layer_norm(ir::Graph& g, PassContext&) {
  for (ir::Node* n : g.nodes())
    if (n->is_onnx("ReduceMean")) fuse_at(g, n);
}

}  // namespace vkc::passes
