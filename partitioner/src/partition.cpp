#include "vkc/partitioner/partition.h"

#include <algorithm>
#include <set>
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
  // Values read by a node outside the delegate, found in one sweep over the graph.
  std::unordered_set<const ir::Value*> read_outside;
  for (const ir::Node* n : g.nodes())
    if (!inside.count(n))
      for (const ir::Value* v : n->inputs())
        if (v) read_outside.insert(v);
  for (const ir::Node* n : d.nodes)
    for (ir::Value* out : n->outputs())
      if (read_outside.count(out) && seen.insert(out).second) d.outputs.push_back(out);
}

// Greedy grouping in topological order. A node joins the group of one of its producers (or,
// failing that, any group) unless a path from that group reaches it through a node outside
// the group, or the group already reaches a group with a path to the node (contracting the
// groups would then create a cycle); otherwise it starts a group.
// `reach` is the set of groups with a path to a node, `tainted` those whose path leaves the
// group on the way.
std::vector<std::vector<ir::Node*>> group_acyclic(const ir::Graph& g, const std::vector<ir::Node*>& accepted) {
  const std::unordered_set<const ir::Node*> ok(accepted.begin(), accepted.end());
  std::unordered_map<const ir::Node*, int> group;
  std::unordered_map<const ir::Node*, std::set<int>> reach, tainted;
  std::vector<std::vector<ir::Node*>> groups;
  std::vector<std::set<int>> into;  // per group: the groups with a path into it
  for (ir::Node* n : g.nodes()) {
    std::set<int>& r = reach[n];
    std::set<int>& t = tainted[n];
    std::vector<int> candidates;
    for (const ir::Value* v : n->inputs()) {
      const ir::Node* p = v ? v->producer() : nullptr;
      if (!p) continue;
      const auto& pr = reach[p];
      const auto& pt = tainted[p];
      r.insert(pr.begin(), pr.end());
      t.insert(pt.begin(), pt.end());
      auto pg = group.find(p);
      for (int gi : pr)
        if (pg == group.end() || gi != pg->second) t.insert(gi);  // the path leaves gi at p
      if (pg != group.end()) candidates.push_back(pg->second);
    }
    if (!ok.count(n)) continue;
    // Joining group c adds an edge into c from every group with a path to n: c must not already
    // reach one of them (through any nodes), or the contracted groups would form a cycle.
    auto can_join = [&](int c) {
      if (t.count(c)) return false;
      for (int h : r)
        if (h != c && into[static_cast<size_t>(h)].count(c)) return false;
      return true;
    };
    int chosen = -1;
    for (int c : candidates)
      if (can_join(c) && (chosen < 0 || c < chosen)) chosen = c;
    // No producer's group will do: any group that stays acyclic is safe, so independent branches
    // share a delegate too. The latest such group keeps locality.
    for (int c = static_cast<int>(groups.size()) - 1; chosen < 0 && c >= 0; --c)
      if (can_join(c)) chosen = c;
    if (chosen < 0) {
      chosen = static_cast<int>(groups.size());
      groups.emplace_back();
      into.emplace_back();
    }
    group[n] = chosen;
    groups[chosen].push_back(n);
    for (int h : r)
      if (h != chosen) into[static_cast<size_t>(chosen)].insert(h);
    r.insert(chosen);
  }
  return groups;
}

}  // namespace

size_t Partition::num_rejected() const {
  return std::count_if(decisions.begin(), decisions.end(), [](const NodeDecision& d) { return d.delegate < 0; });
}

Partition partition_graph(ir::Graph& g, const PartitionOptions& options,
                          const std::map<std::string, std::string>& not_lowered) {
  Partition p;
  // 1. Decide per node.
  std::vector<ir::Node*> accepted;
  std::unordered_map<const ir::Node*, size_t> decision_of;
  for (ir::Node* n : g.nodes()) {
    decision_of[n] = p.decisions.size();
    NodeDecision d{n->name(), n->qualified_op(), -1, {}};
    if (n->domain() != ir::kVulkanDomain) {
      auto it = not_lowered.find(n->name());
      d.reason = it != not_lowered.end() ? it->second : "no Vulkan lowering for " + n->qualified_op();
    } else if (auto misfit = node_misfit(*n, options.limits)) {
      d.reason = *misfit;
    }
    if (d.reason.empty()) accepted.push_back(n);
    p.decisions.push_back(std::move(d));
  }
  // 2. Group accepted nodes into delegates that stay acyclic once contracted.
  std::vector<std::vector<ir::Node*>> runs = group_acyclic(g, accepted);
  std::unordered_map<const ir::Node*, int> group_of;
  for (size_t i = 0; i < runs.size(); ++i)
    for (const ir::Node* n : runs[i]) group_of[n] = static_cast<int>(i);
  for (const ir::Node* n : accepted) p.decisions[decision_of.at(n)].delegate = group_of.at(n);
  // 3. Prepare each delegate.
  for (auto& run : runs) {
    Delegate d;
    d.nodes = std::move(run);
    insert_prepack(g, d);
    tag_storage(g, d, options.limits, options.size_independent_layouts);
    compute_boundary(g, d);
    if (!options.skip_memory_planning) plan_memory(d);
    p.delegates.push_back(std::move(d));
  }
  return p;
}

}  // namespace vkc::partitioner
