// Add, Sub, Mul, Div, Relu, Sigmoid, HardSwish, Clip.
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
