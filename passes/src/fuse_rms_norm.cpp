// RMSNorm as exporters decompose it over the last axis:
//   x * 1 / Sqrt(ReduceMean(x^2) + eps) [* w]   (also x / Sqrt(...), x * Reciprocal(Sqrt(...)) and
//   x * Pow(..., -0.5))
// becomes et_vk.rms_norm(x, w, eps); a missing w is ones.
#include <cmath>

#include "pattern_utils.h"
#include "vkc/passes/passes.h"

namespace vkc::passes {
namespace {

// x when `sq` is x * x or Pow(x, 2).
ir::Value* squared(const ir::Node* sq) {
  if (!sq) return nullptr;
  if (sq->is_onnx("Mul") && sq->input(0) == sq->input(1)) return sq->input(0);
  if (sq->is_onnx("Pow") && constant_scalar(sq->input(1)) == 2.0) return sq->input(0);
  return nullptr;
}

bool fuse_at(ir::Graph& g, ir::Node* mean) {
  if (!mean->is_onnx("ReduceMean") || !reduces_last_axis(mean)) return false;
  ir::Node* sq = mean->input(0)->producer();
  ir::Value* x = squared(sq);
  if (!x || g.users(sq->output(0)).size() != 1 || !x->shape().is_static() || x->dtype() != ir::DType::Float32)
    return false;
  ir::Node* add = sole_user(g, mean->output(0), "Add");
  auto eps = add ? constant_scalar(other_operand(add, mean->output(0))) : std::nullopt;
  if (!eps) return false;
  std::vector<ir::Node*> dead = {sq, mean, add};
  ir::Node* scaled = nullptr;  // the node computing x / rms
  if (ir::Node* rsqrt = sole_user(g, add->output(0), "Pow"); rsqrt && constant_scalar(rsqrt->input(1)) == -0.5) {
    ir::Node* mul = sole_user(g, rsqrt->output(0), "Mul");
    if (!mul || other_operand(mul, rsqrt->output(0)) != x) return false;
    dead.push_back(rsqrt);
    scaled = mul;
  } else if (ir::Node* sqrt = sole_user(g, add->output(0), "Sqrt")) {
    dead.push_back(sqrt);
    if (ir::Node* div = sole_user(g, sqrt->output(0), "Div"); div && div->input(0) == x) {
      scaled = div;
    } else if (ir::Node* rec = sole_user(g, sqrt->output(0), "Reciprocal");
               rec || ((rec = sole_user(g, sqrt->output(0), "Div")) && rec->input(1) == sqrt->output(0) &&
                       constant_scalar(rec->input(0)) == 1.0)) {  // Reciprocal(s) or Div(1, s)
      ir::Node* mul = sole_user(g, rec->output(0), "Mul");
      if (!mul || other_operand(mul, rec->output(0)) != x) return false;
      dead.push_back(rec);
      scaled = mul;
    }
  }
  if (!scaled) return false;
  const int64_t width = x->shape().sizes().back();
  ir::Node* last = scaled;
  ir::Value* w = nullptr;
  if (ir::Node* mul = sole_user(g, scaled->output(0), "Mul")) {
    ir::Value* c = other_operand(mul, scaled->output(0));
    if (c && c->is_constant() && c->shape().rank() == 1 && c->shape().sizes()[0] == width) {
      w = c;
      dead.push_back(scaled);
      last = mul;
    }
  }
  if (!w) w = add_f32_constant(g, mean->name() + "_weight", {width}, std::vector<float>(width, 1.0f));
  last->morph(ir::kVulkanDomain, "et_vk.rms_norm.default", {x, w}, {{"eps", *eps}});
  for (ir::Node* n : dead) g.remove_node(n);
  return true;
}

}  // namespace

void fuse_rms_norm(ir::Graph& g, PassContext&) {
  for (ir::Node* n : g.nodes())
    if (n->is_onnx("ReduceMean")) fuse_at(g, n);
}

}  // namespace vkc::passes
