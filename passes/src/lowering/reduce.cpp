// ReduceMean / ReduceSum / ReduceMax / ReduceMin.
#include <map>

#include "../constants.h"
#include "lowering.h"

namespace vkc::passes::lowering {

Result lower_reduce(ir::Graph& g, ir::Node* n) {
  static const std::map<std::string, std::string, std::less<>> kOps = {{"ReduceMean", "aten.mean.dim"},
                                                                       {"ReduceSum", "aten.sum.dim_IntList"},
                                                                       {"ReduceMax", "aten.amax.default"},
                                                                       {"ReduceMin", "aten.amin.default"}};
  auto rank = static_cast<int64_t>(static_rank(n->input(0)).value_or(0));
  if (!rank) return std::string("input rank is unknown");
  std::vector<int64_t> axes;
  if (n->has_attr("axes")) {
    axes = n->attr_ints("axes");
  } else if (n->input(1)) {
    auto c = constant_ints(n->input(1));
    if (!c) return std::string("axes is not a constant");
    axes = *c;
  }
  if (axes.empty()) {
    if (n->attr_int("noop_with_empty_axes", 0)) return std::string("noop_with_empty_axes is not supported");
    for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
  }
  for (int64_t& a : axes) a = a < 0 ? a + rank : a;
  if (!ir::is_float(n->output(0)->dtype())) return std::string("only floating-point inputs are supported");
  const bool keepdim = n->attr_int("keepdims", 1) != 0;
  const std::string& op = kOps.at(n->op_type());
  if ((axes.size() > 1 || !keepdim) && has_static_shape(n->input(0)) && has_static_shape(n->output(0))) {
    // The runtime reduces one dim (any texture, keepdim) or two of a few layouts: several axes
    // become a chain of one-axis reductions (exact for max/min/sum; mean of equal-sized means),
    // and without keepdim the reduced dims are dropped by a view (keepdim=False reductions have
    // texture representations only over the last dim).
    ir::Value* cur = n->input(0);
    auto shape = cur->shape().sizes();
    for (size_t i = 0; i + 1 < axes.size(); ++i) {
      shape[axes[i]] = 1;
      ir::Node* r = g.add_node(ir::kVulkanDomain, op, {cur}, {{cur->dtype(), ir::Shape::of(shape)}},
                               g.unique_name(n->name() + "_axis" + std::to_string(axes[i])), n);
      r->attrs() = {{"dim", std::vector<int64_t>{axes[i]}}, {"keepdim", true}};
      cur = r->output(0);
    }
    shape[axes.back()] = 1;
    if (keepdim) {
      to_runtime(n, op, {cur}, {{"dim", std::vector<int64_t>{axes.back()}}, {"keepdim", true}});
      return std::nullopt;
    }
    ir::Node* last = g.add_node(ir::kVulkanDomain, op, {cur}, {{cur->dtype(), ir::Shape::of(shape)}},
                                g.unique_name(n->name() + "_axis" + std::to_string(axes.back())), n);
    last->attrs() = {{"dim", std::vector<int64_t>{axes.back()}}, {"keepdim", true}};
    to_runtime(n, "aten.view_copy.default", {last->output(0)}, {{"size", n->output(0)->shape().sizes()}});
    return std::nullopt;
  }
  to_runtime(n, op, {n->input(0)}, {{"dim", axes}, {"keepdim", keepdim}});
  return std::nullopt;
}

// ArgMax / ArgMin(axis, keepdims): the first index of the extreme value (select_last_index 0).
Result lower_arg_reduce(ir::Graph&, ir::Node* n) {
  if (n->attr_int("select_last_index", 0) != 0) return std::string("select_last_index=1 is not supported");
  if (!ir::is_float(n->input(0)->dtype())) return std::string("only floating-point inputs are supported");
  to_runtime(n, n->op_type() == "ArgMax" ? "aten.argmax.default" : "aten.argmin.default", {n->input(0)},
             {{"dim", n->attr_int("axis", 0)}, {"keepdim", n->attr_int("keepdims", 1) != 0}});
  return std::nullopt;
}

}  // namespace vkc::passes::lowering
