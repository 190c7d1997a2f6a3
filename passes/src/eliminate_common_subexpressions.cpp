// Merges identical constants (same dtype, shape and bytes) and then identical
// nodes (same operator, inputs and attributes), in topological order so that
// chains of duplicates collapse in one sweep.
#include <cstring>
#include <functional>
#include <string_view>
#include <unordered_map>

#include "vkc/ir/printer.h"
#include "vkc/passes/passes.h"

namespace vkc::passes {
namespace {

void merge_constants(ir::Graph& g) {
  std::unordered_multimap<size_t, ir::Value*> seen;
  for (ir::Value* v : g.values()) {
    if (!v->is_constant() || g.is_output(v)) continue;
    const auto bytes = v->data().bytes();
    const size_t h = std::hash<std::string_view>{}(
                         std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size())) ^
                     std::hash<std::string>{}(v->type().str());
    ir::Value* same = nullptr;
    auto [lo, hi] = seen.equal_range(h);
    for (auto it = lo; it != hi && !same; ++it) {
      const ir::Value* c = it->second;
      if (c->type() == v->type() && c->data().size() == bytes.size() &&
          std::memcmp(c->data().data(), bytes.data(), bytes.size()) == 0)
        same = it->second;
    }
    if (same) g.replace_all_uses(v, same);
    else seen.emplace(h, v);
  }
}

void merge_nodes(ir::Graph& g) {
  std::unordered_map<std::string, ir::Node*> seen;
  for (ir::Node* n : g.nodes()) {
    // The node's text without its outputs: operator, inputs and attributes.
    const std::string line = ir::print_node(*n);
    const std::string key = line.substr(line.find(" = ")) + "#" + std::to_string(n->outputs().size()) + "#" +
                            std::to_string(n->opset());
    auto [it, fresh] = seen.emplace(key, n);
    if (fresh) continue;
    ir::Node* first = it->second;
    bool same_types = true;
    for (size_t i = 0; i < n->outputs().size(); ++i) same_types = same_types && first->output(i)->type() == n->output(i)->type();
    if (!same_types) continue;
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
