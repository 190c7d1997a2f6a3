#include "ill_formed_branches.h"

#include <fmt/format.h>

#include <unordered_map>

namespace vkc::passes::folding {
namespace {

// The contradicted node a value depends on (null when none): through every input, except that an
// unresolved IfSelect depends on one only when both of its branches do.
class Poison {
 public:
  explicit Poison(const std::map<std::string, std::string>& contradictions) : contradictions_(contradictions) {}

  const ir::Node* of(const ir::Value* v) {
    if (!v || v->is_constant() || !v->producer()) return nullptr;
    if (auto it = memo_.find(v); it != memo_.end()) return it->second;
    memo_[v] = nullptr;  // a graph is acyclic; this only guards the recursion
    const ir::Node* p = v->producer();
    const ir::Node* found = nullptr;
    if (contradictions_.count(p->name())) {
      found = p;
    } else if (p->is(ir::kVkcDomain, "IfSelect")) {
      const ir::Node* a = of(p->input(1));
      const ir::Node* b = of(p->input(2));
      found = a && b ? a : nullptr;
    } else {
      for (const ir::Value* in : p->inputs())
        if ((found = of(in))) break;
    }
    return memo_[v] = found;
  }

 private:
  const std::map<std::string, std::string>& contradictions_;
  std::unordered_map<const ir::Value*, const ir::Node*> memo_;
};

}  // namespace

bool take_well_formed_branches(ir::Graph& g, const std::map<std::string, std::string>& contradictions,
                               std::vector<std::string>& notes) {
  if (contradictions.empty()) return false;
  Poison poison(contradictions);
  bool changed = false;
  for (ir::Node* n : g.nodes()) {  // producers first: inner Ifs before the Ifs that read them
    if (!n->is(ir::kVkcDomain, "IfSelect")) continue;
    const ir::Node* bad_then = poison.of(n->input(1));
    const ir::Node* bad_else = poison.of(n->input(2));
    if (!bad_then == !bad_else) continue;
    const ir::Node* bad = bad_then ? bad_then : bad_else;
    ir::Value* taken = n->input(bad_then ? 2 : 1);
    notes.push_back(fmt::format(
        "If output '{}': the {} branch cannot run with these input shapes (node '{}' ({}): {}), so the {} branch is "
        "always taken",
        n->output(0)->name(), bad_then ? "then" : "else", bad->name(), bad->op_type(), contradictions.at(bad->name()),
        bad_then ? "else" : "then"));
    if (g.is_output(n->output(0))) {
      n->output(0)->set_type(taken->type());
      n->morph(ir::kOnnxDomain, "Identity", {taken}, {});
      n->set_opset(13);
    } else {
      g.replace_all_uses(n->output(0), taken);
      g.remove_node(n);
    }
    changed = true;
  }
  return changed;
}

}  // namespace vkc::passes::folding
