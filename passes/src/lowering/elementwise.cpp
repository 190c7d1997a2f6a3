// Add, Sub, Mul, Div, Relu, Sigmoid, HardSwish, Clip.
#include <cmath>
#include <map>

#include "../constants.h"
#include "lowering.h"

namespace vkc::passes::lowering {

Result lower_binary(ir::Graph&, ir::Node* n) {
  static const std::map<std::string, std::string, std::less<>> kOps = {
      {"Add", "aten.add.Tensor"}, {"Sub", "aten.sub.Tensor"}, {"Mul", "aten.mul.Tensor"}, {"Div", "aten.div.Tensor"}};
  // Integer Add/Sub/Mul run as the runtime's int variants (i64 is i32 on the GPU, as in ET-VK);
  // integer Div truncates in ONNX but the runtime's div is floating-point only.
  const ir::DType t = n->output(0)->dtype();
  const bool integer = t == ir::DType::Int32 || t == ir::DType::Int64;
  if (!ir::is_float(t) && !(integer && !n->is_onnx("Div")))
    return std::string(integer ? "integer Div is not supported" : "only floating-point and integer arithmetic is supported");
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

// Constant bounds become clamp's; a computed one (e.g. a spectrogram floored at its max - 80 dB)
// becomes max(x, lo) = x + relu(lo - x) (the runtime has no maximum) and minimum(x, hi).
Result lower_clip(ir::Graph& g, ir::Node* n) {
  ir::AttributeMap attrs;
  ir::Value* bounds[2] = {nullptr, nullptr};  // computed min, max
  if (!ir::is_float(n->output(0)->dtype())) return std::string("only floating-point inputs are supported");
  if (n->opset() < 11) {  // bounds are attributes before opset 11
    if (n->has_attr("min")) attrs["min"] = n->attr_float("min", 0);
    if (n->has_attr("max")) attrs["max"] = n->attr_float("max", 0);
  } else {
    for (auto [index, name] : {std::pair<size_t, const char*>{1, "min"}, {2, "max"}}) {
      ir::Value* bound = n->num_inputs() > index ? n->input(index) : nullptr;
      if (!bound) continue;
      if (auto v = constant_scalar(bound)) {
        attrs[name] = *v;
      } else if (bound->type().known() && bound->shape().is_static() && bound->shape().numel() == 1 &&
                 ir::is_float(bound->dtype())) {
        bounds[index - 1] = bound;
      } else {
        return std::string(name) + " bound is not a scalar";
      }
    }
  }
  ir::Value* x = n->input(0);
  if (bounds[0]) {
    ir::Value* up = emit(g, n, "aten.relu.default", {emit(g, n, "aten.sub.Tensor", {bounds[0], x})});
    if (!bounds[1] && attrs.empty()) {
      to_runtime(n, "aten.add.Tensor", {x, up}, {});
      return std::nullopt;
    }
    x = emit(g, n, "aten.add.Tensor", {x, up});
  }
  if (bounds[1]) {
    if (attrs.empty()) {
      to_runtime(n, "aten.minimum.default", {x, bounds[1]}, {});
      return std::nullopt;
    }
    x = emit(g, n, "aten.minimum.default", {x, bounds[1]});
  }
  to_runtime(n, "aten.clamp.default", {x}, std::move(attrs));
  return std::nullopt;
}

}  // namespace vkc::passes::lowering
