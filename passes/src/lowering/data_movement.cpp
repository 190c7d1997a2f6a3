// Transpose, Slice, Split, Pad (constant, reflect, edge, wrap), Identity / pass-through Dropout.
#include <fmt/format.h>

#include <algorithm>

#include "../constants.h"
#include "lowering.h"
#include "vkc/passes/passes.h"

namespace vkc::passes::lowering {

Result lower_transpose(ir::Graph&, ir::Node* n) {
  auto rank = static_rank(n->input(0));
  if (!rank) return std::string("input rank is unknown");
  std::vector<int64_t> perm;
  for (int64_t d = static_cast<int64_t>(*rank); d-- > 0;) perm.push_back(d);
  to_runtime(n, "aten.permute_copy.default", {n->input(0)}, {{"dims", n->attr_ints("perm", perm)}});
  return std::nullopt;
}

// One slice_copy per sliced axis, with bounds made explicit and in range; an axis taken with a
// negative step is an index_select of its positions in that order.
Result lower_slice(ir::Graph& g, ir::Node* n) {
  ir::Value* x = n->input(0);
  if (!has_static_shape(x)) return std::string("input shape is not static");
  const auto dims = x->shape().sizes();
  const int64_t rank = static_cast<int64_t>(dims.size());
  std::vector<int64_t> starts, ends, axes, steps;
  if (n->opset() < 10) {
    starts = n->attr_ints("starts");
    ends = n->attr_ints("ends");
    axes = n->attr_ints("axes");
  } else {
    auto s = constant_ints(n->input(1)), e = constant_ints(n->input(2));
    auto a = n->input(3) ? constant_ints(n->input(3)) : std::optional<std::vector<int64_t>>(std::vector<int64_t>{});
    auto st = n->input(4) ? constant_ints(n->input(4)) : std::optional<std::vector<int64_t>>(std::vector<int64_t>{});
    if (!s || !e || !a || !st) return std::string("starts/ends/axes/steps are not constants");
    starts = *s, ends = *e, axes = *a, steps = *st;
  }
  if (ends.size() != starts.size() || (!axes.empty() && axes.size() != starts.size()) ||
      (!steps.empty() && steps.size() != starts.size()))
    return std::string("starts, ends, axes and steps differ in length");
  struct Cut {
    int64_t dim, start, end, step;
    std::vector<int64_t> picks;  // a negative step: the source positions, in order (index_select)
  };
  std::vector<Cut> cuts;
  for (size_t i = 0; i < starts.size(); ++i) {
    int64_t a = axes.empty() ? static_cast<int64_t>(i) : axes[i];
    if (a < 0) a += rank;
    if (a < 0 || a >= rank) return fmt::format("axis {} is out of range", a);
    const int64_t step = steps.empty() ? 1 : steps[i];
    if (step == 0) return std::string("a zero step is not allowed");
    const int64_t size = dims[a];
    if (step < 0) {  // from start down to (not including) end: start in [0, size-1], end in [-1, size-1]
      const int64_t s = std::clamp<int64_t>(starts[i] < 0 ? starts[i] + size : starts[i], 0, size - 1);
      const int64_t e = std::clamp<int64_t>(ends[i] < 0 ? ends[i] + size : ends[i], -1, size - 1);
      std::vector<int64_t> picks;
      for (int64_t k = s; k > e && size > 0; k = k < INT64_MIN - step ? e : k + step) picks.push_back(k);
      cuts.push_back({a, 0, 0, step, std::move(picks)});
      continue;
    }
    auto clamp_index = [&](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + size : v, 0, size); };
    const int64_t s = clamp_index(starts[i]), e = clamp_index(ends[i]);
    if (s == 0 && e == size && step == 1) continue;  // the whole axis
    cuts.push_back({a, s, std::max(s, e), step, {}});
  }
  ir::Value* cur = x;
  std::vector<int64_t> shape = dims;
  for (size_t i = 0; i < cuts.size(); ++i) {
    const Cut& c = cuts[i];
    const bool reversed = c.step < 0;
    if (reversed && c.picks.empty()) return std::string("a negative-step slice that selects nothing is not supported");
    shape[c.dim] = reversed ? static_cast<int64_t>(c.picks.size()) : (c.end - c.start + c.step - 1) / c.step;
    const char* op = reversed ? "aten.index_select.default" : "aten.slice_copy.Tensor";
    std::vector<ir::Value*> ins = {cur};
    if (reversed)
      ins.push_back(add_i64_constant(g, n->name() + "_picks", {static_cast<int64_t>(c.picks.size())}, c.picks));
    ir::AttributeMap attrs = reversed ? ir::AttributeMap{{"dim", c.dim}}
                                      : ir::AttributeMap{{"dim", c.dim}, {"start", c.start}, {"end", c.end}, {"step", c.step}};
    if (i + 1 == cuts.size()) {
      to_runtime(n, op, ins, std::move(attrs));
      return std::nullopt;
    }
    ir::Node* m = g.add_node(ir::kVulkanDomain, op, ins, {{x->dtype(), ir::Shape::of(shape)}},
                             g.unique_name(n->name() + "_slice"), n);
    m->attrs() = std::move(attrs);
    cur = m->output(0);
  }
  // Nothing is cut: a copy keeps the node's output a distinct value.
  to_runtime(n, "aten.view_copy.default", {x}, {{"size", dims}});
  return std::nullopt;
}

Result lower_split(ir::Graph&, ir::Node* n) {
  ir::Value* x = n->input(0);
  if (!has_static_shape(x)) return std::string("input shape is not static");
  const int64_t rank = static_cast<int64_t>(x->shape().rank());
  int64_t axis = n->attr_int("axis", 0);
  if (axis < 0) axis += rank;
  std::vector<int64_t> sizes;
  if (axis < 0 || axis >= rank) return fmt::format("axis {} is out of range", axis);
  for (const ir::Value* o : n->outputs()) {
    if (!has_static_shape(o)) return std::string("output shapes are not static");
    sizes.push_back(o->shape().sizes().at(axis));
  }
  to_runtime(n, "aten.split_with_sizes_copy.default", {x}, {{"split_sizes", sizes}, {"dim", axis}});
  return std::nullopt;
}

// Identity, and a Dropout that passes its input through, left by remove-identity only between a
// graph input and a graph output: a copy.
Result lower_identity(ir::Graph& g, ir::Node* n) {
  if (n->is_onnx("Dropout")) {
    if (!dropout_passes_through(n)) return std::string("training-mode Dropout (random) is not supported");
    if (n->outputs().size() > 1 && n->output(1) && (!g.users(n->output(1)).empty() || g.is_output(n->output(1))))
      return std::string("the mask output has no static shape");
    g.set_outputs(n, {n->output(0)});
  }
  to_runtime(n, "aten.clone.default", {n->input(0)}, {});
  return std::nullopt;
}

namespace {

// The source index of output position j (-begin <= j < size + end) along a padded dim.
int64_t pad_source(const std::string& mode, int64_t j, int64_t size) {
  if (mode == "edge") return std::clamp<int64_t>(j, 0, size - 1);
  if (mode == "wrap") return ((j % size) + size) % size;
  if (size == 1) return 0;  // reflect
  const int64_t period = 2 * (size - 1);
  j = ((j % period) + period) % period;
  return j < size ? j : period - j;
}

}  // namespace

// Pad: constant mode is constant_pad_nd. reflect / edge / wrap (static shape) are one
// index_select per padded dim with the constant source indices of every output position.
Result lower_pad(ir::Graph& g, ir::Node* n) {
  const std::string mode = n->attr_string("mode", "constant");
  if (mode != "constant" && mode != "reflect" && mode != "edge" && mode != "wrap")
    return "pad mode '" + mode + "' is not supported";
  auto rank = static_rank(n->input(0));
  if (!rank) return std::string("input rank is unknown");
  const size_t r = *rank;
  std::vector<int64_t> pads;
  double value = 0;
  if (n->opset() < 11) {
    pads = n->attr_ints("pads");
    value = n->attr_float("value", 0);
  } else {
    auto p = constant_ints(n->input(1));
    if (!p) return std::string("pads is not a constant");
    pads = *p;
    if (n->num_inputs() > 2 && n->input(2)) {
      auto v = constant_scalar(n->input(2));
      if (!v) return std::string("the pad value is not a constant");
      value = *v;
    }
    if (n->num_inputs() > 3 && n->input(3)) {  // opset 18: pads for these axes only
      auto axes = constant_ints(n->input(3));
      if (!axes) return std::string("axes is not a constant");
      if (pads.size() != 2 * axes->size()) return std::string("pads does not match axes");
      std::vector<int64_t> full(2 * r, 0);
      for (size_t i = 0; i < axes->size(); ++i) {
        const int64_t a = (*axes)[i] < 0 ? (*axes)[i] + static_cast<int64_t>(r) : (*axes)[i];
        if (a < 0 || a >= static_cast<int64_t>(r)) return std::string("axes is out of range");
        full[static_cast<size_t>(a)] = pads[i];
        full[r + static_cast<size_t>(a)] = pads[axes->size() + i];
      }
      pads = full;
    }
  }
  if (pads.size() != 2 * r) return fmt::format("pads has {} values, expected {}", pads.size(), 2 * r);
  if (std::any_of(pads.begin(), pads.end(), [](int64_t p) { return p < 0; }))
    return std::string("negative pads (cropping) are not supported");
  if (mode != "constant") {
    ir::Value* x = n->input(0);
    if (!x->shape().is_static()) return "pad mode '" + mode + "' needs a static input shape";
    std::vector<int64_t> shape = x->shape().sizes();
    std::vector<size_t> padded;
    for (size_t d = 0; d < r; ++d)
      if (pads[d] || pads[r + d]) padded.push_back(d);
    if (padded.empty()) {
      to_runtime(n, "aten.clone.default", {x}, {});
      return std::nullopt;
    }
    for (size_t d : padded)
      if (shape[d] == 0) return std::string("an empty dim cannot be padded by reflect, edge or wrap");
    for (size_t k = 0; k < padded.size(); ++k) {
      const size_t d = padded[k];
      std::vector<int64_t> source;
      for (int64_t j = -pads[d]; j < shape[d] + pads[r + d]; ++j) source.push_back(pad_source(mode, j, shape[d]));
      ir::Value* idx = add_i64_constant(g, n->name() + "_pad_source", {static_cast<int64_t>(source.size())}, source);
      shape[d] = static_cast<int64_t>(source.size());
      const ir::AttributeMap attrs = {{"dim", static_cast<int64_t>(d)}};
      if (k + 1 == padded.size()) {
        to_runtime(n, "aten.index_select.default", {x, idx}, attrs);
      } else {
        ir::Node* sel = g.add_node(ir::kVulkanDomain, "aten.index_select.default", {x, idx},
                                   {{x->dtype(), ir::Shape::of(shape)}}, g.unique_name(n->name() + "_pad"), n);
        sel->attrs() = attrs;
        x = sel->output(0);
      }
    }
    return std::nullopt;
  }
  // torch order: last dim first, (begin, end) pairs; trailing all-zero pairs may go.
  std::vector<int64_t> torch_pad;
  for (size_t d = r; d-- > 0;) torch_pad.insert(torch_pad.end(), {pads[d], pads[r + d]});
  while (torch_pad.size() > 2 && torch_pad[torch_pad.size() - 1] == 0 && torch_pad[torch_pad.size() - 2] == 0)
    torch_pad.resize(torch_pad.size() - 2);
  to_runtime(n, "aten.constant_pad_nd.default", {n->input(0)}, {{"pad", torch_pad}, {"value", value}});
  return std::nullopt;
}

}  // namespace vkc::passes::lowering
