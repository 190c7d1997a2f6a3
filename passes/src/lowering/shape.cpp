// Reshape, Flatten, Concat, Softmax.
#include <fmt/format.h>

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

Result lower_softmax(ir::Graph&, ir::Node* n) {
  auto rank = static_rank(n->input(0));
  if (!rank) return std::string("input rank is unknown");
  const int64_t r = static_cast<int64_t>(*rank);
  int64_t axis = n->attr_int("axis", n->opset() >= 13 ? -1 : 1);
  if (axis < 0) axis += r;
  // Before opset 13 Softmax flattens to 2-D at `axis`; that equals a softmax over
  // one axis only when `axis` is the last one.
  if (n->opset() < 13 && axis != r - 1)
    return fmt::format("opset-{} Softmax over the flattened dims [{}..{}] is not supported", n->opset(), axis, r - 1);
  if (!ir::is_float(n->output(0)->dtype())) return std::string("only floating-point inputs are supported");
  to_runtime(n, n->op_type() == "LogSoftmax" ? "aten._log_softmax.default" : "aten._softmax.default", {n->input(0)},
             {{"dim", axis}, {"half_to_float", false}});
  return std::nullopt;
}

}  // namespace vkc::passes::lowering
