// ReduceMean / ReduceSum / ReduceMax / ReduceMin, ArgMax / ArgMin.
#include <algorithm>
#include <map>

#include "../constants.h"
#include "lowering.h"

namespace vkc::passes::lowering {

namespace {

// One axis reduced, keepdim. ET-VK reduces along a dim its texture lays out as x, y or z, and not
// along the dim batches are stacked on: an axis before the last three (or C of a 4-D tensor whose
// batch is above 1) is reduced as the middle dim of a 3-D view [before, axis, after] instead.
bool needs_3d_view(const std::vector<int64_t>& shape, int64_t a) {
  const auto rank = static_cast<int64_t>(shape.size());
  return rank - 1 - a >= 3 || (rank == 4 && a == 1 && shape[0] > 1);
}

// `x` reduced along `a` as the middle dim of the view [before, a, after]: [before, 1, after].
ir::Value* reduce_as_3d(ir::Graph& g, ir::Node* n, const std::string& op, ir::Value* x, int64_t a) {
  const auto shape = x->shape().sizes();
  int64_t before = 1, after = 1;
  for (int64_t d = 0; d < a; ++d) before *= shape[d];
  for (int64_t d = a + 1; d < static_cast<int64_t>(shape.size()); ++d) after *= shape[d];
  const std::vector<int64_t> view{before, shape[a], after}, reduced{before, 1, after};
  const std::string name = n->name() + "_axis" + std::to_string(a);
  ir::Node* v = g.add_node(ir::kVulkanDomain, "aten.view_copy.default", {x}, {{x->dtype(), ir::Shape::of(view)}},
                           g.unique_name(name + "_3d"), n);
  v->attrs() = {{"size", view}};
  ir::Node* r = g.add_node(ir::kVulkanDomain, op, {v->output(0)}, {{x->dtype(), ir::Shape::of(reduced)}},
                           g.unique_name(name), n);
  r->attrs() = {{"dim", std::vector<int64_t>{1}}, {"keepdim", true}};
  return r->output(0);
}

// `x` reduced along `a`, keepdim.
ir::Value* reduce_one_axis(ir::Graph& g, ir::Node* n, const std::string& op, ir::Value* x, int64_t a) {
  auto out_shape = x->shape().sizes();
  out_shape[a] = 1;
  const std::string name = n->name() + "_axis" + std::to_string(a);
  if (!needs_3d_view(x->shape().sizes(), a)) {
    ir::Node* r = g.add_node(ir::kVulkanDomain, op, {x}, {{x->dtype(), ir::Shape::of(out_shape)}}, g.unique_name(name), n);
    r->attrs() = {{"dim", std::vector<int64_t>{a}}, {"keepdim", true}};
    return r->output(0);
  }
  ir::Node* back = g.add_node(ir::kVulkanDomain, "aten.view_copy.default", {reduce_as_3d(g, n, op, x, a)},
                              {{x->dtype(), ir::Shape::of(out_shape)}}, g.unique_name(name + "_back"), n);
  back->attrs() = {{"size", out_shape}};
  return back->output(0);
}

}  // namespace

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
  // Two of the last three dims in one dispatch (the registry then keeps the third one packed, as
  // ET-VK's reduce2d needs: the spatial mean of a channels-packed feature map), keepdim; without
  // keepdim a view drops them.
  std::vector<int64_t> sorted = axes;
  std::sort(sorted.begin(), sorted.end());
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  // (ET-VK's reduce2d also refuses, for a batch above 1, to reduce the dim batches are stacked
  // along in a texture: C of a 4-D tensor.)
  const auto& in_dims = n->input(0)->shape();
  const bool stacked_batches = rank == 4 && sorted.size() == 2 && sorted[0] == 1 &&
                               !(in_dims.is_static() && in_dims.sizes()[0] == 1);
  if (sorted.size() == 2 && rank >= 3 && sorted[0] >= rank - 3 && !stacked_batches) {
    if (keepdim) {
      to_runtime(n, op, {n->input(0)}, {{"dim", sorted}, {"keepdim", true}});
      return std::nullopt;
    }
    if (has_static_shape(n->input(0)) && has_static_shape(n->output(0))) {
      auto shape = n->input(0)->shape().sizes();
      for (int64_t a : sorted) shape[a] = 1;
      ir::Node* r = g.add_node(ir::kVulkanDomain, op, {n->input(0)}, {{n->input(0)->dtype(), ir::Shape::of(shape)}},
                               g.unique_name(n->name() + "_keepdim"), n);
      r->attrs() = {{"dim", sorted}, {"keepdim", true}};
      to_runtime(n, "aten.view_copy.default", {r->output(0)}, {{"size", n->output(0)->shape().sizes()}});
      return std::nullopt;
    }
  }
  const bool reaches_batches = in_dims.is_static() && std::any_of(sorted.begin(), sorted.end(), [&](int64_t a) {
    return in_dims.sizes()[a] > 1 && needs_3d_view(in_dims.sizes(), a);
  });
  if ((axes.size() > 1 || !keepdim || reaches_batches) && has_static_shape(n->input(0)) && has_static_shape(n->output(0))) {
    // The runtime reduces one dim (any texture, keepdim) or two of a few layouts: several axes
    // become a chain of one-axis reductions (exact for max/min/sum; mean of equal-sized means),
    // and without keepdim the reduced dims are dropped by a view (keepdim=False reductions have
    // texture representations only over the last dim). An axis of size 1 is left as it is.
    ir::Value* cur = n->input(0);
    std::vector<int64_t> todo;
    for (int64_t a : sorted)
      if (in_dims.sizes()[a] != 1) todo.push_back(a);
    for (size_t i = 0; i + 1 < todo.size(); ++i) cur = reduce_one_axis(g, n, op, cur, todo[i]);
    if (!todo.empty()) {
      const int64_t a = todo.back();
      if (keepdim && !needs_3d_view(cur->shape().sizes(), a)) {
        to_runtime(n, op, {cur}, {{"dim", std::vector<int64_t>{a}}, {"keepdim", true}});
        return std::nullopt;
      }
      // The output's view of the last reduction (keepdim or not: the same elements).
      cur = needs_3d_view(cur->shape().sizes(), a) ? reduce_as_3d(g, n, op, cur, a) : reduce_one_axis(g, n, op, cur, a);
    }
    to_runtime(n, "aten.view_copy.default", {cur}, {{"size", n->output(0)->shape().sizes()}});
    return std::nullopt;
  }
  to_runtime(n, op, {n->input(0)}, {{"dim", axes}, {"keepdim", keepdim}});
  return std::nullopt;
}

// ArgMax / ArgMin(axis, keepdims): the first index of the extreme value. select_last_index 1
// takes the first index in x reversed along the axis (index_select with constant indices
// n-1..0) and maps it back: last = (n - 1) - first_reversed.
Result lower_arg_reduce(ir::Graph& g, ir::Node* n) {
  const ir::DType in = n->input(0)->dtype();
  if (!ir::is_float(in) && in != ir::DType::Int32 && in != ir::DType::Int64)
    return std::string("only floating-point and int32/int64 inputs are supported");
  const char* op = n->op_type() == "ArgMax" ? "aten.argmax.default" : "aten.argmin.default";
  const int64_t axis = n->attr_int("axis", 0);
  const ir::AttributeMap attrs = {{"dim", axis}, {"keepdim", n->attr_int("keepdims", 1) != 0}};
  if (n->attr_int("select_last_index", 0) == 0) {
    to_runtime(n, op, {n->input(0)}, attrs);
    return std::nullopt;
  }
  ir::Value* x = n->input(0);
  auto rank = static_rank(x);
  if (!rank || !x->shape().is_static()) return std::string("select_last_index=1 needs a static input shape");
  const int64_t d = axis < 0 ? axis + static_cast<int64_t>(*rank) : axis;
  if (d < 0 || d >= static_cast<int64_t>(*rank)) return std::string("axis is out of range");
  const int64_t size = x->shape().sizes()[static_cast<size_t>(d)];
  std::vector<int64_t> reversed(static_cast<size_t>(size));
  for (int64_t i = 0; i < size; ++i) reversed[static_cast<size_t>(i)] = size - 1 - i;
  auto i64 = [&](const std::string& tag, const std::vector<int64_t>& v, std::vector<int64_t> shape) {
    return add_i64_constant(g, n->name() + tag, shape, v);
  };
  ir::Node* flip = g.add_node(ir::kVulkanDomain, "aten.index_select.default", {x, i64("_reversed", reversed, {size})},
                              {x->type()}, g.unique_name(n->name() + "_reverse"), n);
  flip->attrs() = {{"dim", d}};
  ir::Node* first = g.add_node(ir::kVulkanDomain, op, {flip->output(0)}, {n->output(0)->type()},
                               g.unique_name(n->name() + "_first"), n);
  first->attrs() = attrs;
  to_runtime(n, "aten.sub.Tensor", {i64("_last", {size - 1}, {}), first->output(0)}, {});
  return std::nullopt;
}

}  // namespace vkc::passes::lowering
