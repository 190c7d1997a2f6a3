// GELU as exporters decompose it (erf form):
//   0.5 * x * (1 + Erf(x / sqrt(2)))   in either multiplication order
// becomes one Gelu(x) (approximate = "none"), lowered to aten.gelu.
#include <cmath>

#include "pattern_utils.h"
#include "vkc/passes/passes.h"

namespace vkc::passes {
namespace {

bool near(std::optional<double> v, double want) { return v && std::abs(*v - want) < 1e-4 * std::abs(want); }

// x when `scaled` is x / sqrt(2) or x * (1 / sqrt(2)).
ir::Value* unscaled(const ir::Node* scaled) {
  if (!scaled) return nullptr;
  if (scaled->is_onnx("Div") && near(constant_scalar(scaled->input(1)), M_SQRT2)) return scaled->input(0);
  if (scaled->is_onnx("Mul")) {
    if (near(constant_scalar(scaled->input(1)), M_SQRT1_2)) return scaled->input(0);
    if (near(constant_scalar(scaled->input(0)), M_SQRT1_2)) return scaled->input(1);
  }
  return nullptr;
}

bool fuse_at(ir::Graph& g, ir::Node* erf) {
  ir::Node* scale = erf->input(0)->producer();
  ir::Value* x = unscaled(scale);
  if (!x || g.users(scale->output(0)).size() != 1) return false;
  ir::Node* plus_one = sole_user(g, erf->output(0), "Add");
  if (!plus_one || !near(constant_scalar(other_operand(plus_one, erf->output(0))), 1.0)) return false;
  ir::Node* mul = sole_user(g, plus_one->output(0), "Mul");
  if (!mul) return false;
  ir::Value* factor = other_operand(mul, plus_one->output(0));
  std::vector<ir::Node*> dead = {scale, erf, plus_one};
  ir::Node* last = nullptr;
  if (factor == x) {  // x * (1 + erf) * 0.5
    ir::Node* half = sole_user(g, mul->output(0), "Mul");
    if (!half || !near(constant_scalar(other_operand(half, mul->output(0))), 0.5)) return false;
    dead.push_back(mul);
    last = half;
  } else {  // (0.5 * x) * (1 + erf)
    ir::Node* half = factor ? factor->producer() : nullptr;
    if (!half || !half->is_onnx("Mul") || other_operand(half, x) == nullptr ||
        !near(constant_scalar(other_operand(half, x)), 0.5) || g.users(half->output(0)).size() != 1)
      return false;
    dead.push_back(half);
    last = mul;
  }
  last->morph(ir::kOnnxDomain, "Gelu", {x}, {{"approximate", std::string("none")}});
  last->set_opset(20);
  for (ir::Node* n : dead) g.remove_node(n);
  return true;
}

}  // namespace

void fuse_gelu(ir::Graph& g, PassContext&) {
  for (ir::Node* n : g.nodes())
    if (n->is_onnx("Erf") && n->input(0)->producer()) fuse_at(g, n);
}

}  // namespace vkc::passes
