// Unary math, Pow, Min/Max, LeakyRelu, Gelu.
#include <fmt/format.h>

#include <cmath>
#include <cstring>
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
  const ir::DType t = n->output(0)->dtype();
  if (n->op_type() == "Neg" && (t == ir::DType::Int32 || t == ir::DType::Int64)) {  // integer: x * -1
    ir::Value* minus_one = nullptr;
    if (t == ir::DType::Int64) {
      minus_one = add_i64_constant(g, g.unique_name(n->name() + "_minus_one"), {1}, {-1});
    } else {
      const int32_t v = -1;
      std::vector<uint8_t> bytes(4);
      std::memcpy(bytes.data(), &v, 4);
      minus_one = g.add_constant(g.unique_name(n->name() + "_minus_one"), {t, ir::Shape::of({1})},
                                 ir::TensorData::owned(std::move(bytes)));
    }
    to_runtime(n, "aten.mul.Tensor", {n->input(0), minus_one}, {});
    return std::nullopt;
  }
  if (!ir::is_float(t)) return std::string("only floating-point inputs are supported");
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

Result lower_pow(ir::Graph& g, ir::Node* n) {
  if (!ir::is_float(n->output(0)->dtype())) return std::string("only floating-point inputs are supported");
  if (auto e = constant_scalar(n->input(1))) {
    if (*e == 0.5) to_runtime(n, "aten.sqrt.default", {n->input(0)}, {});
    else to_runtime(n, "aten.pow.Tensor_Scalar", {n->input(0)}, {{"exponent", *e}});
    return std::nullopt;
  }
  ir::Value* y = n->input(1);
  if (y->type().known() && y->dtype() != n->output(0)->dtype()) {  // ONNX allows an integer exponent
    ir::Node* cast = g.add_node(ir::kVulkanDomain, "aten._to_copy.default", {y},
                                {{n->output(0)->dtype(), y->shape()}}, g.unique_name(n->name() + "_exponent"), n);
    y = cast->output(0);
  }
  to_runtime(n, "aten.pow.Tensor_Tensor", {n->input(0), y}, {});
  return std::nullopt;
}

// Min / Max of two inputs. A constant scalar side becomes a clamp bound; the runtime
// has minimum but no maximum, so max(a, b) = a + relu(b - a) for floats and
// a + b - minimum(a, b) for integers (exact; the runtime has no integer relu).
Result lower_min_max(ir::Graph& g, ir::Node* n) {
  if (n->num_inputs() == 1 && n->input(0)) {  // the min / max of one tensor is itself
    to_runtime(n, "aten.clone.default", {n->input(0)}, {});
    return std::nullopt;
  }
  if (n->num_inputs() != 2 || !n->input(0) || !n->input(1)) return std::string("only two inputs are supported");
  const ir::DType t = n->output(0)->dtype();
  const bool integer = t == ir::DType::Int32 || t == ir::DType::Int64;
  if (!ir::is_float(t) && !integer) return std::string("only floating-point and integer inputs are supported");
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
  if (integer) {
    ir::Value* low = emit(g, n, "aten.minimum.default", {n->input(0), n->input(1)});
    ir::Value* sum = emit(g, n, "aten.add.Tensor", {n->input(0), n->input(1)});
    to_runtime(n, "aten.sub.Tensor", {sum, low}, {});
    return std::nullopt;
  }
  ir::Value* diff = emit(g, n, "aten.sub.Tensor", {n->input(1), n->input(0)});
  ir::Value* pos = emit(g, n, "aten.relu.default", {diff});
  to_runtime(n, "aten.add.Tensor", {n->input(0), pos}, {});
  return std::nullopt;
}

// The runtime has neither elu nor prelu: elu(x) = relu(x) + alpha * (exp(min(x, 0)) - 1) and
// prelu(x) = relu(x) + slope * min(x, 0) (slope broadcasting as ONNX says).
Result lower_elu(ir::Graph& g, ir::Node* n) {
  if (!ir::is_float(n->output(0)->dtype())) return std::string("only floating-point inputs are supported");
  ir::Value* x = n->input(0);
  ir::Value* neg = emit(g, n, "aten.clamp.default", {x}, {{"max", 0.0}});
  ir::Value* e = emit(g, n, "aten.exp.default", {neg});
  ir::Value* em1 = emit(g, n, "aten.sub.Tensor", {e, add_f32_constant(g, g.unique_name(n->name() + "_one"), {}, {1.0f})},
                        {{"alpha", 1.0}});
  const float alpha = static_cast<float>(n->attr_float("alpha", 1.0));
  ir::Value* scaled =
      emit(g, n, "aten.mul.Tensor", {em1, add_f32_constant(g, g.unique_name(n->name() + "_alpha"), {}, {alpha})});
  to_runtime(n, "aten.add.Tensor", {emit(g, n, "aten.relu.default", {x}), scaled}, {{"alpha", 1.0}});
  return std::nullopt;
}

Result lower_prelu(ir::Graph& g, ir::Node* n) {
  if (!ir::is_float(n->output(0)->dtype())) return std::string("only floating-point inputs are supported");
  ir::Value* x = n->input(0);
  ir::Value* slope = n->input(1);
  // A 1-D slope of C values is per channel (dim 1) where numpy broadcasting would not line it up
  // (opset 6 and exporters of its time): give it trailing unit dims.
  if (slope->is_constant() && slope->shape().rank() == 1 && has_static_shape(x) && x->shape().rank() >= 3) {
    const auto xs = x->shape().sizes();
    const int64_t c = slope->shape().sizes()[0];
    if (c == xs[1] && c != 1 && (n->opset() < 7 || xs.back() != c)) {
      std::vector<int64_t> shape(xs.size() - 1, 1);
      shape[0] = c;
      slope = g.add_constant(g.unique_name(slope->name() + "_per_channel"), {slope->dtype(), ir::Shape::of(shape)},
                             slope->data());
    }
  }
  ir::Value* neg = emit(g, n, "aten.mul.Tensor", {emit(g, n, "aten.clamp.default", {x}, {{"max", 0.0}}), slope});
  to_runtime(n, "aten.add.Tensor", {emit(g, n, "aten.relu.default", {x}), neg}, {{"alpha", 1.0}});
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
