// Unary math, Pow, Min/Max, LeakyRelu, Gelu.
#include <fmt/format.h>

#include <cmath>
#include <map>

#include "../constants.h"
#include "lowering.h"

namespace vkc::passes::lowering {
namespace {

}  // namespace

Result lower_math_unary(ir::Graph& g, ir::Node* n) {
  static const std::map<std::string, std::string, std::less<>> kDirect = {
      {"Tanh", "aten.tanh.default"}, {"Abs", "aten.abs.default"}, {"Neg", "aten.neg.default"},
      {"Sqrt", "aten.sqrt.default"}, {"Exp", "aten.exp.default"}, {"Sin", "aten.sin.default"},
      {"Cos", "aten.cos.default"},   {"Round", "aten.round.default"}};
  if (!ir::is_float(n->output(0)->dtype())) return std::string("only floating-point inputs are supported");
  if (auto it = kDirect.find(n->op_type()); it != kDirect.end()) {
    to_runtime(n, it->second, {n->input(0)}, {});
    return std::nullopt;
  }
  if (n->op_type() == "Reciprocal") {
    to_runtime(n, "aten.pow.Tensor_Scalar", {n->input(0)}, {{"exponent", -1.0}});
    return std::nullopt;
  }
  if (n->op_type() == "Log") {  // the runtime has log10 only: ln x = log10 x * ln 10
    ir::Value* l10 = emit(g, n, "aten.log10.default", {n->input(0)});
    to_runtime(n, "aten.mul.Tensor", {l10, add_f32_constant(g, n->name() + "_ln10", {1}, {float(M_LN10)})}, {});
    return std::nullopt;
  }
  return fmt::format("no Vulkan lowering for {}", n->op_type());
}

Result lower_pow(ir::Graph&, ir::Node* n) {
  if (!ir::is_float(n->output(0)->dtype())) return std::string("only floating-point inputs are supported");
  if (auto e = constant_scalar(n->input(1))) {
    if (*e == 0.5) to_runtime(n, "aten.sqrt.default", {n->input(0)}, {});
    else to_runtime(n, "aten.pow.Tensor_Scalar", {n->input(0)}, {{"exponent", *e}});
    return std::nullopt;
  }
  to_runtime(n, "aten.pow.Tensor_Tensor", {n->input(0), n->input(1)}, {});
  return std::nullopt;
}

// Min / Max of two inputs. A constant scalar side becomes a clamp bound; the runtime
// has minimum but no maximum, so max(a, b) = a + relu(b - a).
Result lower_min_max(ir::Graph& g, ir::Node* n) {
  if (n->num_inputs() != 2 || !n->input(0) || !n->input(1)) return std::string("only two inputs are supported");
  if (!ir::is_float(n->output(0)->dtype())) return std::string("only floating-point inputs are supported");
  const bool is_max = n->op_type() == "Max";
  for (size_t side : {0u, 1u}) {
    auto c = constant_scalar(n->input(side));
    if (!c || n->input(side)->shape().rank() > n->input(1 - side)->shape().rank()) continue;
    if (n->input(1 - side)->shape() != n->output(0)->shape()) continue;
    to_runtime(n, "aten.clamp.default", {n->input(1 - side)}, {{is_max ? "min" : "max", *c}});
    return std::nullopt;
  }
  if (!is_max) {
    to_runtime(n, "aten.minimum.default", {n->input(0), n->input(1)}, {});
    return std::nullopt;
  }
  ir::Value* diff = emit(g, n, "aten.sub.Tensor", {n->input(1), n->input(0)});
  ir::Value* pos = emit(g, n, "aten.relu.default", {diff});
  to_runtime(n, "aten.add.Tensor", {n->input(0), pos}, {});
  return std::nullopt;
}

Result lower_leaky_relu(ir::Graph&, ir::Node* n) {
  if (!ir::is_float(n->output(0)->dtype())) return std::string("only floating-point inputs are supported");
  to_runtime(n, "aten.leaky_relu.default", {n->input(0)}, {{"negative_slope", n->attr_float("alpha", 0.01)}});
  return std::nullopt;
}

Result lower_gelu(ir::Graph&, ir::Node* n) {
  if (!ir::is_float(n->output(0)->dtype())) return std::string("only floating-point inputs are supported");
  const std::string approx = n->attr_string("approximate", "none");
  if (approx != "none" && approx != "tanh") return "unknown approximate '" + approx + "'";
  to_runtime(n, "aten.gelu.default", {n->input(0)}, {{"approximate", approx}});
  return std::nullopt;
}

}  // namespace vkc::passes::lowering
