// Small helpers the fusion passes share to walk ONNX patterns.
#pragma once

#include <optional>
#include <string_view>

#include "constants.h"
#include "vkc/ir/graph.h"

namespace vkc::passes {

/// The only user of `v` when it is an ONNX `op` node (and `v` is no graph output); else null.
inline ir::Node* sole_user(const ir::Graph& g, const ir::Value* v, std::string_view op) {
  if (g.is_output(v)) return nullptr;
  auto users = g.users(v);
  return users.size() == 1 && users[0]->is_onnx(op) ? users[0] : nullptr;
}

/// The operand of a binary node that is not `v` (null when `v` is not an operand).
inline ir::Value* other_operand(const ir::Node* n, const ir::Value* v) {
  return n->input(0) == v ? n->input(1) : n->input(1) == v ? n->input(0) : nullptr;
}

/// The producer of `v` when it is an ONNX `op` node used only here; else null.
inline ir::Node* sole_producer(const ir::Graph& g, const ir::Value* v, std::string_view op) {
  ir::Node* p = v ? v->producer() : nullptr;
  return p && p->is_onnx(op) && !g.is_output(v) && g.users(v).size() == 1 ? p : nullptr;
}

/// Whether `n` reduces over the last axis with keepdims (attribute or constant-input axes).
inline bool reduces_last_axis(const ir::Node* n) {
  if (!n || n->attr_int("keepdims", 1) != 1 || !n->input(0)->type().known()) return false;
  auto axes = n->has_attr("axes") ? std::optional(n->attr_ints("axes")) : constant_ints(n->input(1));
  const int64_t rank = static_cast<int64_t>(n->input(0)->shape().rank());
  return axes && axes->size() == 1 && ((*axes)[0] == -1 || (*axes)[0] == rank - 1);
}

}  // namespace vkc::passes
