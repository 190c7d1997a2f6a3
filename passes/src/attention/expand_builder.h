// Building the standard operators a contrib operator computes, for the expansions of
// expand-microsoft-ops (GroupQueryAttention, RotaryEmbedding, Attention, MultiHeadAttention): typed
// nodes and constants placed after the node being expanded.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

#include "../constants.h"
#include "vkc/passes/pass.h"

namespace vkc::passes {

using Ints = std::vector<int64_t>;

struct ExpandBuilder {
  ir::Graph& g;
  const ir::Node* at;
  ir::DType dt;

  ir::Value* op(const char* name, std::vector<ir::Value*> ins, ir::DType t, const Ints& shape, ir::AttributeMap a = {}) {
    return add_onnx_node(g, at, name, std::move(ins), {t, ir::Shape::of(shape)}, std::move(a));
  }
  ir::Value* f(const char* name, std::vector<ir::Value*> ins, const Ints& shape, ir::AttributeMap a = {}) {
    return op(name, std::move(ins), dt, shape, std::move(a));
  }
  ir::Value* ints(const Ints& shape, const Ints& values) {
    return add_i64_constant(g, g.unique_name(at->name() + "_c"), shape, values);
  }
  ir::Value* scalar(double v) { return add_float_constant(g, g.unique_name(at->name() + "_s"), {}, {float(v)}, dt); }
  ir::Value* reshape(ir::Value* x, const Ints& shape) {
    return f("Reshape", {x, ints({int64_t(shape.size())}, shape)}, shape);
  }
  ir::Value* transpose(ir::Value* x, const Ints& perm) {
    const Ints s = x->shape().sizes();
    Ints o;
    for (int64_t p : perm) o.push_back(s[p]);
    return op("Transpose", {x}, x->dtype(), o, {{"perm", perm}});
  }
  // x[..., begin:end] on the last axis.
  ir::Value* slice_last(ir::Value* x, int64_t begin, int64_t end) {
    Ints s = x->shape().sizes();
    const int64_t axis = int64_t(s.size()) - 1;
    s.back() = end - begin;
    return op("Slice", {x, ints({1}, {begin}), ints({1}, {end}), ints({1}, {axis})}, x->dtype(), s);
  }
  ir::Value* concat(std::vector<ir::Value*> xs, int64_t axis) {
    Ints s = xs[0]->shape().sizes();
    const size_t a = size_t(axis < 0 ? axis + int64_t(s.size()) : axis);
    s[a] = 0;
    for (ir::Value* x : xs) s[a] += x->shape().sizes()[a];
    return op("Concat", std::move(xs), dt, s, {{"axis", axis}});
  }
};

// The error for what node `n` cannot be expanded: "OP 'name': why".
inline PassError node_error(const ir::Node* n, const std::string& why) {
  return PassError(fmt::format("{} '{}': {}", n->op_type(), n->name(), why));
}

inline ir::Value* input_at(const ir::Node* n, size_t i) { return n->num_inputs() > i ? n->input(i) : nullptr; }

inline bool static_value(const ir::Value* v) { return v && v->type().known() && v->shape().is_static(); }

// Replaces n's outputs by `results` (null: none); graph outputs keep their names through an Identity.
inline void replace_outputs(ir::Graph& g, ir::Node* n, const std::vector<ir::Value*>& results) {
  std::vector<std::pair<ir::Value*, ir::Value*>> named;
  for (size_t i = 0; i < n->outputs().size(); ++i) {
    ir::Value* o = n->output(i);
    if (!o) continue;
    ir::Value* r = i < results.size() ? results[i] : nullptr;
    const bool read = g.is_output(o) || !g.users(o).empty();
    if (!r) {
      if (read) throw node_error(n, fmt::format("its output {} is read; vkc does not compute it", i));
      continue;
    }
    if (g.is_output(o)) named.emplace_back(o, r);
    g.replace_all_uses(o, r);
  }
  g.set_outputs(n, {});
  g.remove_node(n);
  for (auto [o, r] : named) {
    std::replace(g.outputs.begin(), g.outputs.end(), r, o);
    o->set_type(r->type());
    g.add_node_with_outputs(ir::kOnnxDomain, "Identity", {r}, {o}, g.unique_name(o->name() + "_Identity"))->set_opset(13);
  }
}

}  // namespace vkc::passes
