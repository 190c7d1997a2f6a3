// Reshape, Flatten, Concat, Softmax.
#include <fmt/format.h>

#include <algorithm>

#include "lowering.h"

namespace vkc::passes::lowering {

Result lower_reshape(ir::Graph&, ir::Node* n) {
  const ir::Value* out = n->output(0);
  if (!out->type().known() || !out->shape().is_static())
    return std::string("output shape is not static (fix input shapes with --input-shape)");
  to_runtime(n, "aten.view_copy.default", {n->input(0)}, {{"size", out->shape().sizes()}});
  return std::nullopt;
}

Result lower_concat(ir::Graph&, ir::Node* n) {
  auto rank = static_rank(n->output(0));
  if (!rank) return std::string("output rank is unknown");
  int64_t axis = n->attr_int("axis", 0);
  if (axis < 0) axis += static_cast<int64_t>(*rank);
  std::vector<ir::Value*> inputs;
  for (ir::Value* v : n->inputs())
    if (v) inputs.push_back(v);
  to_runtime(n, "aten.cat.default", std::move(inputs), {{"dim", axis}});
  return std::nullopt;
}

Result lower_softmax(ir::Graph& g, ir::Node* n) {
  auto rank = static_rank(n->input(0));
  if (!rank) return std::string("input rank is unknown");
  const int64_t r = static_cast<int64_t>(*rank);
  int64_t axis = n->attr_int("axis", n->opset() >= 13 ? -1 : 1);
  if (axis < 0) axis += r;
  if (axis < 0 || axis >= std::max<int64_t>(r, 1)) return fmt::format("axis {} is out of range", axis);
  if (!ir::is_float(n->output(0)->dtype())) return std::string("only floating-point inputs are supported");
  const char* op = n->op_type() == "LogSoftmax" ? "aten._log_softmax.default" : "aten._softmax.default";
  // Before opset 13 Softmax flattens to 2-D at `axis` and normalizes each row over dims
  // [axis, rank): a view to [outer, inner], the softmax over dim 1, and a view back.
  if (n->opset() < 13 && axis != r - 1) {
    if (!has_static_shape(n->input(0)))
      return fmt::format("opset-{} Softmax over the flattened dims [{}..{}] needs a static shape", n->opset(), axis, r - 1);
    const auto dims = n->input(0)->shape().sizes();
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < r; ++d) (d < axis ? outer : inner) *= dims[d];
    const ir::TensorType flat{n->input(0)->dtype(), ir::Shape::of({outer, inner})};
    ir::Node* v = g.add_node(ir::kVulkanDomain, "aten.view_copy.default", {n->input(0)}, {flat},
                             g.unique_name(n->name() + "_2d"), n);
    v->attrs() = {{"size", std::vector<int64_t>{outer, inner}}};
    ir::Node* s = g.add_node(ir::kVulkanDomain, op, {v->output(0)}, {flat}, g.unique_name(n->name() + "_rows"), n);
    s->attrs() = {{"dim", int64_t{1}}, {"half_to_float", false}};
    to_runtime(n, "aten.view_copy.default", {s->output(0)}, {{"size", dims}});
    return std::nullopt;
  }
  to_runtime(n, op, {n->input(0)}, {{"dim", axis}, {"half_to_float", false}});
  return std::nullopt;
}

}  // namespace vkc::passes::lowering
