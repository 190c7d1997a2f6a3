#include "vkc/ir/printer.h"

#include <fmt/format.h>

#include <unordered_set>

namespace vkc::ir {
namespace {

std::string ref(const Value* v) { return v ? "%" + v->name() : "None"; }

std::string typed(const Value* v) { return fmt::format("%{}: {}", v->name(), v->type().str()); }

}  // namespace

std::string print_node(const Node& n) {
  std::string s;
  for (size_t i = 0; i < n.outputs().size(); ++i) s += (i ? ", " : "") + typed(n.output(i));
  s += " = " + n.qualified_op() + "(";
  for (size_t i = 0; i < n.inputs().size(); ++i) s += (i ? ", " : "") + ref(n.input(i));
  s += ")";
  if (!n.attrs().empty()) {
    s += " {";
    bool first = true;
    for (const auto& [k, v] : n.attrs()) {
      s += fmt::format("{}{}={}", first ? "" : ", ", k, attribute_str(v));
      first = false;
    }
    s += "}";
  }
  return s;
}

std::string print_graph(const Graph& g) {
  std::string s = "graph " + g.name + "(";
  for (size_t i = 0; i < g.inputs.size(); ++i) s += (i ? ", " : "") + typed(g.inputs[i]);
  s += ") -> (";
  for (size_t i = 0; i < g.outputs.size(); ++i) s += (i ? ", " : "") + ref(g.outputs[i]);
  s += ") {\n";
  std::unordered_set<const Value*> shown;
  for (const Node* n : g.nodes()) {
    for (const Value* in : n->inputs()) {
      if (in && in->is_constant() && shown.insert(in).second)
        s += fmt::format("  {} = constant {} bytes\n", typed(in), in->data().size());
    }
    s += "  " + print_node(*n) + "\n";
  }
  return s + "}\n";
}

}  // namespace vkc::ir
