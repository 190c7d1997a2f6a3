#include "vkc/compiler/partition_report.h"

#include <fmt/format.h>

#include <map>
#include <nlohmann/json.hpp>

namespace vkc::compiler {
namespace {

using nlohmann::ordered_json;

std::map<std::string, const partitioner::NodeDecision*> decisions_by_node(const partitioner::Partition& p) {
  std::map<std::string, const partitioner::NodeDecision*> m;
  for (const auto& d : p.decisions) m[d.node] = &d;
  return m;
}

std::string escape_dot(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out.push_back('\\');
    out.push_back(c);
  }
  return out;
}

}  // namespace

std::string partition_report_json(const ir::Graph& g, const partitioner::Partition& p,
                                  const partitioner::DeviceLimits& limits,
                                  const std::vector<passes::PassContext::AttentionDecision>& attention) {
  ordered_json j;
  j["device"] = {{"name", limits.name},
                 {"texture_limits", limits.texture},
                 {"max_storage_buffer_bytes", limits.max_buffer_bytes}};
  size_t delegated = 0;
  ordered_json nodes = ordered_json::array();
  for (const auto& d : p.decisions) {
    ordered_json n = {{"name", d.node}, {"op", d.op}};
    if (d.delegate >= 0) {
      n["delegate"] = d.delegate;
      ++delegated;
    } else {
      n["delegate"] = nullptr;
      n["reason"] = d.reason;
    }
    nodes.push_back(std::move(n));
  }
  j["summary"] = {{"nodes", p.decisions.size()},
                  {"delegated", delegated},
                  {"left_out", p.decisions.size() - delegated},
                  {"delegates", p.delegates.size()},
                  {"graph_nodes_after_partitioning", g.num_nodes()}};
  j["nodes"] = std::move(nodes);
  if (!attention.empty()) {
    j["attention"] = ordered_json::array();
    for (const auto& a : attention) {
      ordered_json e = {{"softmax", a.node}, {"form", a.form}};
      if (!a.why.empty()) e["why"] = a.why;
      j["attention"].push_back(std::move(e));
    }
  }
  j["delegates"] = ordered_json::array();
  for (size_t i = 0; i < p.delegates.size(); ++i) {
    const partitioner::Delegate& d = p.delegates[i];
    ordered_json dj;
    dj["index"] = i;
    dj["operators"] = ordered_json::array();
    std::map<std::string, size_t> reps;
    for (const ir::Node* n : d.nodes) dj["operators"].push_back({{"name", n->name()}, {"op", n->op_type()}});
    for (const ir::Value* v : d.inputs) dj["inputs"].push_back(v->name());
    for (const ir::Value* v : d.outputs) dj["outputs"].push_back(v->name());
    ordered_json tensors = ordered_json::array();
    // In node order, so the report reads like the graph.
    std::vector<const ir::Value*> order(d.inputs.begin(), d.inputs.end());
    for (const ir::Node* n : d.nodes) order.insert(order.end(), n->outputs().begin(), n->outputs().end());
    for (const ir::Value* v : order) {
      auto it = d.placement.find(v);
      if (it == d.placement.end()) continue;
      const std::string storage(ir::storage_name(it->second.rep.storage));
      const std::string layout(ir::layout_name(it->second.rep.layout));
      ++reps[storage + "/" + layout];
      tensors.push_back({{"name", v->name()},
                         {"type", v->type().str()},
                         {"storage", storage},
                         {"layout", layout},
                         {"mem_obj_id", it->second.mem_obj_id}});
    }
    dj["tensors"] = std::move(tensors);
    dj["representations"] = reps;
    dj["memory_objects"] = d.num_memory_objects;
    j["delegates"].push_back(std::move(dj));
  }
  return j.dump(2) + "\n";
}

std::string partition_report_dot(const ir::Graph& g, const partitioner::Partition& p) {
  static const char* kColors[] = {"#8dd3c7", "#bebada", "#80b1d3", "#fdb462", "#b3de69", "#fccde5", "#d9d9d9", "#bc80bd"};
  std::map<const ir::Node*, size_t> delegate_of;
  for (size_t i = 0; i < p.delegates.size(); ++i)
    for (const ir::Node* n : p.delegates[i].nodes) delegate_of[n] = i;
  const auto decisions = decisions_by_node(p);
  std::string s = "digraph vkc {\n  rankdir=TB;\n  node [shape=box, style=filled, fontname=\"monospace\"];\n";
  std::map<const ir::Node*, size_t> id;
  for (const ir::Node* n : g.nodes()) {
    const size_t k = id.size();
    id[n] = k;
    std::string color = "#fb8072", tooltip;
    if (auto it = delegate_of.find(n); it != delegate_of.end()) {
      color = kColors[it->second % (sizeof(kColors) / sizeof(kColors[0]))];
      tooltip = fmt::format("delegate {}", it->second);
    } else if (auto d = decisions.find(n->name()); d != decisions.end()) {
      tooltip = d->second->reason;
    }
    s += fmt::format("  n{} [label=\"{}\\n{}\", fillcolor=\"{}\", tooltip=\"{}\"];\n", k, escape_dot(n->name()),
                     escape_dot(n->op_type()), color, escape_dot(tooltip));
  }
  for (const ir::Node* n : g.nodes())
    for (const ir::Value* v : n->inputs())
      if (v && v->producer() && id.count(v->producer()))
        s += fmt::format("  n{} -> n{} [label=\"{}\"];\n", id[v->producer()], id[n], escape_dot(v->type().str()));
  return s + "}\n";
}

}  // namespace vkc::compiler
