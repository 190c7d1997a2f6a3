// GELU as exporters decompose it, in either multiplication order:
//   erf form:  0.5 * x * (1 + Erf(x / sqrt(2)))                                -> Gelu(x, "none")
//   tanh form: 0.5 * x * (1 + Tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))          -> Gelu(x, "tanh")
//              (x^3 as Pow(x, 3), x * x * x or x * (x * x); HF's gelu_new, GPT-2)
// lowered to aten.gelu.
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

// x when `v` is x * x * x (in any grouping) or Pow(x, 3); `nodes` collects what it passed.
ir::Value* cubed(const ir::Graph& g, const ir::Value* v, std::vector<ir::Node*>& nodes) {
  ir::Node* p = v ? v->producer() : nullptr;
  if (!p || g.users(v).size() != 1) return nullptr;
  if (p->is_onnx("Pow") && near(constant_scalar(p->input(1)), 3.0)) {
    nodes.push_back(p);
    return p->input(0);
  }
  if (!p->is_onnx("Mul")) return nullptr;
  for (size_t side : {0u, 1u}) {
    ir::Value* x = p->input(side);
    const ir::Node* sq = p->input(1 - side)->producer();
    if (sq && sq->is_onnx("Mul") && sq->input(0) == x && sq->input(1) == x && g.users(sq->output(0)).size() == 1) {
      nodes.insert(nodes.end(), {p, const_cast<ir::Node*>(sq)});
      return x;
    }
  }
  return nullptr;
}

// The other operand of a Mul `n` by a constant close to `c`, else null.
ir::Value* times_constant(const ir::Node* n, double c) {
  if (!n || !n->is_onnx("Mul")) return nullptr;
  for (size_t side : {0u, 1u})
    if (near(constant_scalar(n->input(side)), c)) return n->input(1 - side);
  return nullptr;
}

// x for the tanh form's argument sqrt(2/pi) * (x + 0.044715 * x^3); `nodes` collects the pattern.
ir::Value* tanh_argument(const ir::Graph& g, const ir::Node* scale, std::vector<ir::Node*>& nodes) {
  const ir::Value* sum = times_constant(scale, std::sqrt(2.0 / M_PI));
  ir::Node* add = sum ? sum->producer() : nullptr;
  if (!add || !add->is_onnx("Add") || g.users(add->output(0)).size() != 1) return nullptr;
  for (size_t side : {0u, 1u}) {
    ir::Node* term = add->input(1 - side)->producer();
    const ir::Value* cube = times_constant(term, 0.044715);
    std::vector<ir::Node*> inner;
    ir::Value* x = cube ? cubed(g, cube, inner) : nullptr;
    if (!x || x != add->input(side) || g.users(term->output(0)).size() != 1) continue;
    nodes.insert(nodes.end(), {const_cast<ir::Node*>(scale), add, term});
    nodes.insert(nodes.end(), inner.begin(), inner.end());
    return x;
  }
  return nullptr;
}

// The shared tail: f = Erf or Tanh output; 0.5 * x * (1 + f) in either order becomes Gelu(x).
bool fuse_tail(ir::Graph& g, ir::Node* f, ir::Value* x, std::vector<ir::Node*> dead, const char* approximate) {
  ir::Node* plus_one = sole_user(g, f->output(0), "Add");
  if (!plus_one || !near(constant_scalar(other_operand(plus_one, f->output(0))), 1.0)) return false;
  ir::Node* mul = sole_user(g, plus_one->output(0), "Mul");
  if (!mul) return false;
  ir::Value* factor = other_operand(mul, plus_one->output(0));
  dead.insert(dead.end(), {f, plus_one});
  ir::Node* last = nullptr;
  if (factor == x) {  // x * (1 + f) * 0.5
    ir::Node* half = sole_user(g, mul->output(0), "Mul");
    if (!half || !near(constant_scalar(other_operand(half, mul->output(0))), 0.5)) return false;
    dead.push_back(mul);
    last = half;
  } else {  // (0.5 * x) * (1 + f)
    ir::Node* half = factor ? factor->producer() : nullptr;
    if (!half || !half->is_onnx("Mul") || other_operand(half, x) == nullptr ||
        !near(constant_scalar(other_operand(half, x)), 0.5) || g.users(half->output(0)).size() != 1)
      return false;
    dead.push_back(half);
    last = mul;
  }
  last->morph(ir::kOnnxDomain, "Gelu", {x}, {{"approximate", std::string(approximate)}});
  last->set_opset(20);
  for (ir::Node* n : dead) g.remove_node(n);
  return true;
}

bool fuse_erf(ir::Graph& g, ir::Node* erf) {
  ir::Node* scale = erf->input(0)->producer();
  ir::Value* x = unscaled(scale);
  if (!x || g.users(scale->output(0)).size() != 1) return false;
  return fuse_tail(g, erf, x, {scale}, "none");
}

bool fuse_tanh(ir::Graph& g, ir::Node* tanh) {
  ir::Node* scale = tanh->input(0)->producer();
  std::vector<ir::Node*> nodes;
  ir::Value* x = scale && g.users(scale->output(0)).size() == 1 ? tanh_argument(g, scale, nodes) : nullptr;
  return x && fuse_tail(g, tanh, x, nodes, "tanh");
}

}  // namespace

void fuse_gelu(ir::Graph& g, PassContext&) {
  for (ir::Node* n : g.nodes()) {
    if (n->is_onnx("Erf") && n->input(0)->producer()) fuse_erf(g, n);
    else if (n->is_onnx("Tanh") && n->input(0)->producer()) fuse_tanh(g, n);
  }
}

}  // namespace vkc::passes
