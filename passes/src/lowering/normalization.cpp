// BatchNormalization that fuse-batch-norm could not fold into a convolution.
#include "../constants.h"
#include <fmt/format.h>

#include "lowering.h"

namespace vkc::passes::lowering {

Result lower_batch_norm(ir::Graph& g, ir::Node* n) {
  if (n->outputs().size() != 1) return std::string("training-mode outputs (running mean/var) are not supported");
  if (static_rank(n->input(0)) != 4u) return std::string("only rank-4 input is supported");
  for (size_t i = 1; i <= 4; ++i)
    if (!n->input(i) || !n->input(i)->is_constant()) return std::string("scale, bias, mean and var must be constants");
  if (!ir::is_float(n->output(0)->dtype())) return std::string("only floating-point inputs are supported");
  to_runtime(n, "aten._native_batch_norm_legit_no_training.default",
             {n->input(0), n->input(1), n->input(2), n->input(3), n->input(4)},
             {{"momentum", n->attr_float("momentum", 0.9)}, {"eps", n->attr_float("epsilon", 1e-5)}});
  // The runtime writes only the first output; the other two are empty, as in an exported graph.
  const ir::TensorType empty{n->output(0)->dtype(), ir::Shape::of({0})};
  g.add_node_output(n, empty);
  g.add_node_output(n, empty);
  return std::nullopt;
}

// InstanceNormalization (GroupNorm with one group per channel) and GroupNormalization
// -> native_group_norm over (N, C, H*W).
Result lower_group_norm(ir::Graph& g, ir::Node* n) {
  ir::Value* x = n->input(0);
  if (!has_static_shape(x) || x->shape().rank() != 4) return std::string("only rank-4 input is supported");
  if (n->output(0)->dtype() != ir::DType::Float32) return std::string("only f32 inputs are supported");
  const auto s = x->shape().sizes();
  const bool instance = n->op_type() == "InstanceNormalization";
  const int64_t groups = instance ? s[1] : n->attr_int("num_groups", 0);
  if (groups <= 0 || s[1] % groups) return fmt::format("{} groups do not divide {} channels", groups, s[1]);
  ir::Value* scale = n->input(1);
  ir::Value* bias = n->input(2);
  if (!scale || !bias || !scale->is_constant() || !bias->is_constant())
    return std::string("scale and bias must be constants");
  // Opset 18 GroupNormalization takes per-group scale and bias; the runtime's are per channel.
  if (!instance && scale->shape().numel() != s[1]) {
    auto sv = constant_floats(scale), bv = constant_floats(bias);
    if (!sv || !bv || static_cast<int64_t>(sv->size()) != groups) return std::string("scale/bias size is not C or groups");
    std::vector<float> sc, bc;
    for (int64_t c = 0; c < s[1]; ++c) {
      sc.push_back((*sv)[c / (s[1] / groups)]);
      bc.push_back((*bv)[c / (s[1] / groups)]);
    }
    scale = add_f32_constant(g, n->name() + "_scale", {s[1]}, sc);
    bias = add_f32_constant(g, n->name() + "_bias", {s[1]}, bc);
  }
  n->morph(ir::kVulkanDomain, "aten.native_group_norm.default", {x, scale, bias},
           {{"N", s[0]}, {"C", s[1]}, {"HxW", s[2] * s[3]}, {"group", groups}, {"eps", n->attr_float("epsilon", 1e-5)}});
  g.add_node_output(n, {ir::DType::Float32, ir::Shape::of({s[0], groups})});
  g.add_node_output(n, {ir::DType::Float32, ir::Shape::of({s[0], groups})});
  return std::nullopt;
}

// LayerNormalization over the last axis -> native_layer_norm (out, mean, rstd; only out is used).
Result lower_layer_norm(ir::Graph& g, ir::Node* n) {
  auto rank = static_rank(n->input(0));
  if (!rank || !n->input(0)->shape().is_static()) return std::string("input shape is not static");
  const int64_t r = static_cast<int64_t>(*rank);
  int64_t axis = n->attr_int("axis", -1);
  if (axis < 0) axis += r;
  if (axis < 0 || axis >= r) return std::string("axis is out of range");
  for (size_t i = 1; i < n->outputs().size(); ++i)
    if (!g.users(n->output(i)).empty() || g.is_output(n->output(i)))
      return std::string("the Mean / InvStdDev outputs are not supported");
  const ir::DType dt = n->output(0)->dtype();
  if (!ir::is_float(dt) || dt == ir::DType::Float64 || n->input(0)->dtype() != dt)
    return std::string("only f32 and f16 inputs are supported");
  const auto dims = n->input(0)->shape().sizes();
  int64_t width = 1;  // normalization over dims axis.. as one trailing dim
  for (int64_t d = axis; d < r; ++d) width *= dims[d];
  ir::Value* scale = n->input(1);
  ir::Value* bias = n->num_inputs() > 2 ? n->input(2) : nullptr;
  if (!scale || !scale->is_constant() || (bias && !bias->is_constant()))
    return std::string("scale and bias must be constants");
  auto flat = [&](ir::Value* c, const char* tag) {  // [dims axis..] -> [width], broadcast if smaller
    auto v = constant_floats(c);
    if (!v) return static_cast<ir::Value*>(nullptr);
    if (static_cast<int64_t>(v->size()) != width) {
      if (v->size() != 1) return static_cast<ir::Value*>(nullptr);
      v->assign(width, (*v)[0]);
    }
    return c->shape().sizes() == std::vector<int64_t>{width} && c->dtype() == dt
               ? c
               : add_float_constant(g, n->name() + tag, {width}, *v, dt);
  };
  scale = flat(scale, "_scale");
  bias = bias ? flat(bias, "_bias")
              : add_float_constant(g, n->name() + "_bias", {width}, std::vector<float>(width, 0.0f), dt);
  if (!scale || !bias) return std::string("scale and bias must cover the normalized dims");
  // Normalizing over several trailing dims: view them as one, normalize over it, view back.
  ir::Value* x = n->input(0);
  std::vector<int64_t> rows(dims.begin(), dims.begin() + axis);
  rows.push_back(width);
  ir::Value* y = n->output(0);
  if (axis != r - 1) {
    ir::Node* v = g.add_node(ir::kVulkanDomain, "aten.view_copy.default", {x}, {{x->dtype(), ir::Shape::of(rows)}},
                             g.unique_name(n->name() + "_rows"), n);
    v->attrs() = {{"size", rows}};
    x = v->output(0);
    ir::Node* ln = g.add_node(ir::kVulkanDomain, "aten.native_layer_norm.default", {x, scale, bias},
                              {{dt, ir::Shape::of(rows)}}, g.unique_name(n->name() + "_ln"), n);
    ln->attrs() = {{"normalized_shape", std::vector<int64_t>{width}}, {"eps", n->attr_float("epsilon", 1e-5)}};
    auto stats = rows;
    stats.back() = 1;
    g.add_node_output(ln, {dt, ir::Shape::of(stats)});
    g.add_node_output(ln, {dt, ir::Shape::of(stats)});
    to_runtime(n, "aten.view_copy.default", {ln->output(0)}, {{"size", dims}});
    g.set_outputs(n, {y});
    return std::nullopt;
  }
  // Drop ONNX's optional outputs, then give the node the runtime's three.
  n->morph(ir::kVulkanDomain, "aten.native_layer_norm.default", {x, scale, bias},
           {{"normalized_shape", std::vector<int64_t>{width}}, {"eps", n->attr_float("epsilon", 1e-5)}});
  auto stat_shape = dims;
  stat_shape.back() = 1;
  g.set_outputs(n, {y});
  g.add_node_output(n, {dt, ir::Shape::of(stat_shape)});
  g.add_node_output(n, {dt, ir::Shape::of(stat_shape)});
  return std::nullopt;
}

}  // namespace vkc::passes::lowering
