#include "vkc/partitioner/partition.h"

#include <algorithm>
#include <unordered_set>

#include "steps.h"

namespace vkc::partitioner {
namespace {

// Fills inputs/outputs of a delegate from the nodes it holds.
void compute_boundary(const ir::Graph& g, Delegate& d) {
  std::unordered_set<const ir::Node*> inside(d.nodes.begin(), d.nodes.end());
  std::unordered_set<const ir::Value*> seen;
  auto add_input = [&](ir::Value* v) {
    if (v && !v->is_constant() && (!v->producer() || !inside.count(v->producer())) && seen.insert(v).second)
      d.inputs.push_back(v);
  };
  // Graph inputs first, in graph order, then anything else produced outside.
  for (ir::Value* v : g.inputs)
    for (const ir::Node* n : d.nodes)
      if (std::find(n->inputs().begin(), n->inputs().end(), v) != n->inputs().end()) add_input(v);
  for (const ir::Node* n : d.nodes)
    for (ir::Value* v : n->inputs()) add_input(v);

  seen.clear();
  for (ir::Value* v : g.outputs)
    if (v->producer() && inside.count(v->producer()) && seen.insert(v).second) d.outputs.push_back(v);
  for (const ir::Node* n : d.nodes)
    for (ir::Value* out : n->outputs()) {
      if (seen.count(out)) continue;
      for (const ir::Node* user : g.users(out))
        if (!inside.count(user)) {
          d.outputs.push_back(out);
          seen.insert(out);
          break;
        }
    }
}

}  // namespace

size_t Partition::num_rejected() const {
  return std::count_if(decisions.begin(), decisions.end(), [](const NodeDecision& d) { return d.delegate < 0; });
}

Partition partition_graph(ir::Graph& g, const PartitionOptions& options,
                          const std::map<std::string, std::string>& not_lowered) {
  Partition p;
  // 1. Decide per node. A contiguous run of accepted nodes in topological order is
  //    convex (every path between two of its nodes stays inside), so each run can
  //    become one delegate without creating a cycle.
  std::vector<std::vector<ir::Node*>> runs;
  bool in_run = false;
  for (ir::Node* n : g.nodes()) {
    NodeDecision d{n->name(), n->qualified_op(), -1, {}};
    if (n->domain() != ir::kVulkanDomain) {
      auto it = not_lowered.find(n->name());
      d.reason = it != not_lowered.end() ? it->second : "no Vulkan lowering for " + n->qualified_op();
    } else if (auto misfit = node_misfit(*n, options.limits)) {
      d.reason = *misfit;
    }
    if (d.reason.empty()) {
      if (!in_run) runs.emplace_back();
      runs.back().push_back(n);
      d.delegate = static_cast<int>(runs.size()) - 1;
    }
    in_run = d.reason.empty();
    p.decisions.push_back(std::move(d));
  }
  // 2. Prepare each delegate.
  for (auto& run : runs) {
    Delegate d;
    d.nodes = std::move(run);
    insert_prepack(g, d);
    tag_storage(g, d, options.limits);
    compute_boundary(g, d);
    if (!options.skip_memory_planning) plan_memory(d);
    p.delegates.push_back(std::move(d));
  }
  return p;
}

}  // namespace vkc::partitioner
