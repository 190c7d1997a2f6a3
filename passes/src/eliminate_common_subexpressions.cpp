// Merges identical constants (same dtype, shape and bytes) and then identical
// nodes (same operator, inputs and attributes), in topological order so that
// chains of duplicates collapse in one sweep.
#include <algorithm>
#include <cstring>
#include <functional>
#include <string_view>
#include <unordered_map>

#include "vkc/passes/passes.h"

namespace vkc::passes {
namespace {

void merge_constants(ir::Graph& g) {
  std::unordered_multimap<size_t, ir::Value*> seen;
  for (ir::Value* v : g.values()) {
    if (!v->is_constant() || g.is_output(v)) continue;
    // Bucket by type, size and the first bytes (hashing every weight byte would cost more than
    // it saves); candidates in a bucket are compared whole (derived bytes a range at a time: a
    // weight computed when written is not held here).
    const ir::TensorData& data = v->data();
    char first[64];
    const size_t prefix = std::min<size_t>(data.size(), sizeof first);
    data.read(0, {reinterpret_cast<uint8_t*>(first), prefix});
    const size_t h = std::hash<std::string_view>{}(std::string_view(first, prefix)) ^
                     (std::hash<std::string>{}(v->type().str()) << 1) ^ (data.size() << 7);
    ir::Value* same = nullptr;
    auto [lo, hi] = seen.equal_range(h);
    for (auto it = lo; it != hi && !same; ++it) {
      const ir::Value* c = it->second;
      if (c->type() == v->type() && ir::equal_bytes(c->data(), data)) same = it->second;
    }
    if (same) g.replace_all_uses(v, same);
    else seen.emplace(h, v);
  }
}

// Nodes are equal when operator, opset, inputs, attributes and output types are.
bool same_node(const ir::Node* a, const ir::Node* b) {
  if (a->domain() != b->domain() || a->op_type() != b->op_type() || a->opset() != b->opset() ||
      a->inputs() != b->inputs() || a->outputs().size() != b->outputs().size() || a->attrs() != b->attrs())
    return false;
  for (size_t i = 0; i < a->outputs().size(); ++i)
    if (a->output(i)->type() != b->output(i)->type()) return false;
  return true;
}

size_t node_hash(const ir::Node* n) {
  size_t h = std::hash<std::string>{}(n->op_type()) ^ (std::hash<std::string>{}(n->domain()) << 1);
  for (const ir::Value* v : n->inputs()) h = h * 1000003u ^ std::hash<const void*>{}(v);
  for (const auto& [name, value] : n->attrs()) h = h * 31u ^ std::hash<std::string>{}(name) ^ value.index();
  return h;
}

void merge_nodes(ir::Graph& g) {
  std::unordered_multimap<size_t, ir::Node*> seen;
  for (ir::Node* n : g.nodes()) {
    const size_t h = node_hash(n);
    ir::Node* first = nullptr;
    auto [lo, hi] = seen.equal_range(h);
    for (auto it = lo; it != hi && !first; ++it)
      if (same_node(it->second, n)) first = it->second;
    if (!first) {
      seen.emplace(h, n);
      continue;
    }
    for (size_t i = 0; i < n->outputs().size(); ++i) g.replace_all_uses(n->output(i), first->output(i));
    g.remove_node(n);
  }
}

}  // namespace

void eliminate_common_subexpressions(ir::Graph& g, PassContext&) {
  merge_constants(g);
  merge_nodes(g);
}

}  // namespace vkc::passes
