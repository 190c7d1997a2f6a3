#include "vkc/ir/verifier.h"

#include <fmt/format.h>

#include <algorithm>

#include <stdexcept>

#include "vkc/ir/op_registry.h"

namespace vkc::ir {
namespace {

void check_runtime_node(const Node* n, std::vector<std::string>& problems) {
  const OpDef* def = find_op(n->op_type());
  if (!def) {
    problems.push_back(fmt::format("node '{}': '{}' is not a registered runtime operator", n->name(), n->op_type()));
    return;
  }
  const OpSchema* s = &def->schema;
  // Scalar SymInt arguments may each take one trailing input (fed at run time).
  size_t symints = 0;
  for (const ArgSpec& a : s->args) symints += a.symint;
  const bool arity_ok = s->has_tensor_list() ? n->num_inputs() >= s->num_tensor_args()
                                             : n->num_inputs() >= s->num_tensor_args() &&
                                                   n->num_inputs() <= s->num_tensor_args() + symints;
  if (!arity_ok)
    problems.push_back(fmt::format("node '{}' ({}): {} tensor inputs, schema has {}", n->name(), n->op_type(),
                                   n->num_inputs(), s->num_tensor_args()));
  if (s->list_output ? n->outputs().empty() : n->outputs().size() != s->num_outputs)
    problems.push_back(fmt::format("node '{}' ({}): {} outputs, schema has {}", n->name(), n->op_type(),
                                   n->outputs().size(), s->num_outputs));
  const size_t trailing = s->has_tensor_list() ? 0 : n->num_inputs() - std::min(n->num_inputs(), s->num_tensor_args());
  for (const std::string& err : s->check_attrs(n->attrs(), trailing))
    problems.push_back(fmt::format("node '{}' ({}): {}", n->name(), n->op_type(), err));
}

}  // namespace

std::vector<std::string> verify(const Graph& g) {
  std::vector<std::string> problems;
  const uint64_t defined = Graph::new_mark();  // graph inputs, constants, and outputs of nodes seen so far
  for (const Value* v : g.inputs) {
    if (v->is_constant()) problems.push_back(fmt::format("graph input '{}' is a constant", v->name()));
    v->mark(defined);
  }
  for (const Value* v : g.values()) {
    if (!v->is_constant()) continue;
    v->mark(defined);
    if (v->shape().is_static() && dtype_size(v->dtype()) &&
        static_cast<int64_t>(v->data().size()) != v->type().nbytes())
      problems.push_back(fmt::format("constant '{}' of type {} holds {} bytes, expected {}", v->name(),
                                     v->type().str(), v->data().size(), v->type().nbytes()));
  }
  for (const Node* n : g.nodes()) {
    for (const Value* in : n->inputs()) {
      if (in && !in->marked(defined))
        problems.push_back(fmt::format("node '{}' ({}) uses '{}' before it is defined", n->name(), n->qualified_op(),
                                       in->name()));
    }
    for (const Value* out : n->outputs()) {
      if (out->producer() != n)
        problems.push_back(fmt::format("node '{}': output '{}' names another producer", n->name(), out->name()));
      // Already defined: by an earlier node, as a graph input, or as a constant.
      if (!out->mark(defined)) problems.push_back(fmt::format("value '{}' is defined more than once", out->name()));
    }
    if (n->domain() == kVulkanDomain) check_runtime_node(n, problems);
  }
  for (const Value* v : g.outputs)
    if (!v->marked(defined)) problems.push_back(fmt::format("graph output '{}' is never defined", v->name()));
  return problems;
}

void verify_or_throw(const Graph& g) {
  auto problems = verify(g);
  if (!problems.empty()) throw std::runtime_error("invalid IR: " + problems.front());
}

}  // namespace vkc::ir
