// Add, Sub, Mul, Div, Relu, Sigmoid, HardSwish, Clip.
#include <cmath>
#include <map>

#include "../constants.h"
#include "lowering.h"

namespace vkc::passes::lowering {

Result lower_binary(ir::Graph&, ir::Node* n) {
  static const std::map<std::string, std::string, std::less<>> kOps = {
      {"Add", "aten.add.Tensor"}, {"Sub", "aten.sub.Tensor"}, {"Mul", "aten.mul.Tensor"}, {"Div", "aten.div.Tensor"}};
  if (!ir::is_float(n->output(0)->dtype())) return std::string("only floating-point arithmetic is supported");
  to_runtime(n, kOps.at(n->op_type()), {n->input(0), n->input(1)}, {});
  return std::nullopt;
}

Result lower_unary(ir::Graph&, ir::Node* n) {
  static const std::map<std::string, std::string, std::less<>> kOps = {
      {"Relu", "aten.relu.default"}, {"Sigmoid", "aten.sigmoid.default"}, {"HardSwish", "aten.hardswish.default"}};
  if (!ir::is_float(n->output(0)->dtype())) return std::string("only floating-point inputs are supported");
  to_runtime(n, kOps.at(n->op_type()), {n->input(0)}, {});
  return std::nullopt;
}

// HardSigmoid(x) = clamp(alpha * x + beta, 0, 1). The runtime's hardsigmoid is the
// alpha = 1/6, beta = 1/2 case; other alphas scale x first: clamp(a x + 1/2) = hardsigmoid(6 a x).
Result lower_hard_sigmoid(ir::Graph& g, ir::Node* n) {
  if (n->output(0)->dtype() != ir::DType::Float32) return std::string("only f32 inputs are supported");
  const double alpha = n->attr_float("alpha", 0.2);
  const double beta = n->attr_float("beta", 0.5);
  ir::Value* x = n->input(0);
  const ir::TensorType type = n->output(0)->type();
  auto scalar_op = [&](const char* op, ir::Value* in, float value) {
    ir::Value* c = add_f32_constant(g, n->name() + "_" + op, {1}, {value});
    ir::Node* m = g.add_node(ir::kVulkanDomain, op, {in, c}, {type}, g.unique_name(n->name() + "_" + op), n);
    return m->output(0);
  };
  if (beta == 0.5) {
    if (std::abs(alpha * 6.0 - 1.0) > 1e-6) x = scalar_op("aten.mul.Tensor", x, static_cast<float>(alpha * 6.0));
    to_runtime(n, "aten.hardsigmoid.default", {x}, {});
    return std::nullopt;
  }
  x = scalar_op("aten.mul.Tensor", x, static_cast<float>(alpha));
  x = scalar_op("aten.add.Tensor", x, static_cast<float>(beta));
  to_runtime(n, "aten.clamp.default", {x}, {{"min", 0.0}, {"max", 1.0}});
  return std::nullopt;
}

Result lower_clip(ir::Graph&, ir::Node* n) {
  ir::AttributeMap attrs;
  if (n->opset() < 11) {  // bounds are attributes before opset 11
    if (n->has_attr("min")) attrs["min"] = n->attr_float("min", 0);
    if (n->has_attr("max")) attrs["max"] = n->attr_float("max", 0);
  } else {
    for (auto [index, name] : {std::pair<size_t, const char*>{1, "min"}, {2, "max"}}) {
      const ir::Value* bound = n->input(index);
      if (!bound) continue;
      auto v = constant_scalar(bound);
      if (!v) return std::string(name) + " bound is not a constant scalar";
      attrs[name] = *v;
    }
  }
  if (!ir::is_float(n->output(0)->dtype())) return std::string("only floating-point inputs are supported");
  to_runtime(n, "aten.clamp.default", {n->input(0)}, std::move(attrs));
  return std::nullopt;
}

}  // namespace vkc::passes::lowering
