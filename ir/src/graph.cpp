#include "vkc/ir/graph.h"

#include <algorithm>
#include <atomic>
#include <stdexcept>
#include <unordered_set>

namespace vkc::ir {

// ---------------------------------------------------------------- Node

std::string Node::qualified_op() const {
  if (domain_.empty()) return op_type_;
  return domain_ + "." + op_type_;
}

void Node::link_inputs() {
  for (Value* v : inputs_)
    if (v) v->uses_.push_back(this);
}

void Node::unlink_inputs() {
  for (Value* v : inputs_) {
    if (!v) continue;
    auto it = std::find(v->uses_.begin(), v->uses_.end(), this);
    if (it != v->uses_.end()) v->uses_.erase(it);
  }
}

void Node::set_input(size_t i, Value* v) {
  if (i >= inputs_.size()) inputs_.resize(i + 1, nullptr);
  if (Value* old = inputs_[i]) {
    auto it = std::find(old->uses_.begin(), old->uses_.end(), this);
    if (it != old->uses_.end()) old->uses_.erase(it);
  }
  inputs_[i] = v;
  if (v) v->uses_.push_back(this);
}

void Node::set_inputs(std::vector<Value*> vs) {
  unlink_inputs();
  inputs_ = std::move(vs);
  link_inputs();
}

void Node::morph(std::string_view domain, std::string_view op_type, std::vector<Value*> inputs, AttributeMap attrs) {
  domain_ = std::string(domain);
  op_type_ = std::string(op_type);
  set_inputs(std::move(inputs));
  attrs_ = std::move(attrs);
  opset_ = 0;
}

const Attribute* Node::attr(std::string_view k) const {
  auto it = attrs_.find(k);
  return it == attrs_.end() ? nullptr : &it->second;
}

int64_t Node::attr_int(std::string_view k, int64_t def) const {
  const Attribute* a = attr(k);
  if (!a) return def;
  if (auto* v = std::get_if<int64_t>(a)) return *v;
  if (auto* b = std::get_if<bool>(a)) return *b;
  throw std::runtime_error("attribute '" + std::string(k) + "' of node '" + name_ + "' is not an integer");
}

double Node::attr_float(std::string_view k, double def) const {
  const Attribute* a = attr(k);
  if (!a) return def;
  if (auto* v = std::get_if<double>(a)) return *v;
  if (auto* i = std::get_if<int64_t>(a)) return static_cast<double>(*i);
  throw std::runtime_error("attribute '" + std::string(k) + "' of node '" + name_ + "' is not a float");
}

std::string Node::attr_string(std::string_view k, std::string def) const {
  const Attribute* a = attr(k);
  if (!a) return def;
  if (auto* v = std::get_if<std::string>(a)) return *v;
  throw std::runtime_error("attribute '" + std::string(k) + "' of node '" + name_ + "' is not a string");
}

std::vector<int64_t> Node::attr_ints(std::string_view k, std::vector<int64_t> def) const {
  const Attribute* a = attr(k);
  if (!a) return def;
  if (auto* v = std::get_if<std::vector<int64_t>>(a)) return *v;
  throw std::runtime_error("attribute '" + std::string(k) + "' of node '" + name_ + "' is not a list of integers");
}

// ---------------------------------------------------------------- Graph: values

Value* Graph::add_value(std::string name, TensorType type) {
  if (name.empty() || by_name_.count(name)) name = unique_name(name.empty() ? "v" : name);
  values_.push_back(std::unique_ptr<Value>(new Value(name, std::move(type))));
  Value* v = values_.back().get();
  by_name_[v->name()] = v;
  return v;
}

Value* Graph::add_constant(std::string name, TensorType type, TensorData data) {
  Value* v = add_value(std::move(name), std::move(type));
  v->set_data(std::move(data));
  return v;
}

Value* Graph::find_value(std::string_view name) const {
  auto it = by_name_.find(std::string(name));
  return it == by_name_.end() ? nullptr : it->second;
}

std::string Graph::unique_name(std::string_view base) {
  std::string b(base);
  if (!b.empty() && !by_name_.count(b)) return b;
  for (;;) {
    std::string candidate = b + "_" + std::to_string(++name_counter_);
    if (!by_name_.count(candidate)) return candidate;
  }
}

bool Graph::is_output(const Value* v) const {
  return std::find(outputs.begin(), outputs.end(), v) != outputs.end();
}

bool Graph::is_input(const Value* v) const {
  return std::find(inputs.begin(), inputs.end(), v) != inputs.end();
}

std::vector<Value*> Graph::values() const {
  std::vector<Value*> out;
  out.reserve(values_.size());
  for (const auto& v : values_) out.push_back(v.get());
  return out;
}

// ---------------------------------------------------------------- Graph: nodes

Node* Graph::add_node(std::string_view domain, std::string_view op_type, std::vector<Value*> inputs,
                      std::vector<TensorType> output_types, std::string name, const Node* before) {
  if (name.empty()) name = std::string(op_type) + "_" + std::to_string(++node_counter_);
  std::vector<Value*> outs;
  for (auto& t : output_types) outs.push_back(add_value(name + "_out", std::move(t)));
  Node* n = add_node_with_outputs(domain, op_type, std::move(inputs), std::move(outs), std::move(name));
  if (before) {
    auto it_new = std::prev(nodes_.end());
    auto it_pos = std::find_if(nodes_.begin(), nodes_.end(), [&](const auto& p) { return p.get() == before; });
    if (it_pos == nodes_.end()) throw std::logic_error("add_node: insertion point is not in the graph");
    std::rotate(it_pos, it_new, nodes_.end());
  }
  return n;
}

Node* Graph::add_node_with_outputs(std::string_view domain, std::string_view op_type, std::vector<Value*> inputs,
                                   std::vector<Value*> outputs, std::string name) {
  auto n = std::unique_ptr<Node>(new Node());
  n->name_ = name.empty() ? std::string(op_type) + "_" + std::to_string(++node_counter_) : std::move(name);
  n->domain_ = std::string(domain);
  n->op_type_ = std::string(op_type);
  n->inputs_ = std::move(inputs);
  n->link_inputs();
  n->outputs_ = std::move(outputs);
  for (Value* o : n->outputs_) {
    if (o->producer_) throw std::logic_error("value '" + o->name() + "' already has a producer");
    o->producer_ = n.get();
  }
  nodes_.push_back(std::move(n));
  return nodes_.back().get();
}

void Graph::set_outputs(Node* n, std::vector<Value*> outputs) {
  for (Value* o : n->outputs_)
    if (std::find(outputs.begin(), outputs.end(), o) == outputs.end()) o->producer_ = nullptr;
  for (Value* o : outputs)
    if (o->producer_ != n) throw std::logic_error("set_outputs: '" + o->name() + "' is not an output of " + n->name());
  n->outputs_ = std::move(outputs);
}

Value* Graph::add_node_output(Node* n, TensorType type) {
  Value* v = add_value(n->name() + "_out", std::move(type));
  v->producer_ = n;
  n->outputs_.push_back(v);
  return v;
}

void Graph::remove_node(Node* n) {
  n->dead_ = true;
  for (Value* o : n->outputs_)
    if (o->producer_ == n) o->producer_ = nullptr;
}

std::vector<Node*> Graph::nodes() const {
  std::vector<Node*> out;
  out.reserve(nodes_.size());
  for (const auto& n : nodes_)
    if (!n->dead_) out.push_back(n.get());
  return out;
}

size_t Graph::num_nodes() const {
  return std::count_if(nodes_.begin(), nodes_.end(), [](const auto& n) { return !n->dead_; });
}

void Graph::replace_all_uses(Value* from, Value* to) {
  if (from == to) return;
  std::vector<Node*> readers = std::move(from->uses_);
  from->uses_.clear();
  std::sort(readers.begin(), readers.end());
  readers.erase(std::unique(readers.begin(), readers.end()), readers.end());
  for (Node* n : readers)
    for (Value*& in : n->inputs_)
      if (in == from) {
        in = to;
        if (to) to->uses_.push_back(n);
      }
  for (Value*& o : outputs)
    if (o == from) o = to;
}

void Graph::drop_dead_nodes() {
  for (auto& n : nodes_)
    if (n->dead_) n->unlink_inputs();
  std::erase_if(nodes_, [](const auto& n) { return n->dead_; });
}

std::vector<Node*> Graph::users(const Value* v) const {
  std::vector<Node*> out;
  if (!v) return out;
  for (Node* n : v->uses_)
    if (!n->dead_ && std::find(out.begin(), out.end(), n) == out.end()) out.push_back(n);
  if (out.size() < 2) return out;
  // Several readers: in the graph's node order.
  std::vector<Node*> ordered;
  ordered.reserve(out.size());
  for (const auto& n : nodes_)
    if (std::find(out.begin(), out.end(), n.get()) != out.end()) ordered.push_back(n.get());
  return ordered;
}

uint64_t Graph::new_mark() {
  static std::atomic<uint64_t> next{0};
  return ++next;
}

void Graph::compact() {
  drop_dead_nodes();
  const uint64_t used = new_mark();
  for (const Value* v : inputs) v->mark(used);
  for (const Value* v : outputs) v->mark(used);
  for (const auto& n : nodes_) {
    for (const Value* v : n->inputs_)
      if (v) v->mark(used);
    for (const Value* v : n->outputs_) v->mark(used);
  }
  std::erase_if(values_, [&](const auto& v) {
    if (v->marked(used)) return false;
    by_name_.erase(v->name());
    return true;
  });
}

void Graph::topo_sort() {
  drop_dead_nodes();
  const size_t n = nodes_.size();
  std::unordered_map<const Node*, size_t> index;
  for (size_t i = 0; i < n; ++i) index[nodes_[i].get()] = i;
  std::vector<std::vector<size_t>> succ(n);
  std::vector<size_t> indeg(n, 0);
  for (size_t i = 0; i < n; ++i) {
    for (Value* in : nodes_[i]->inputs_) {
      if (!in || !in->producer_) continue;
      auto it = index.find(in->producer_);
      if (it == index.end()) continue;
      succ[it->second].push_back(i);
      ++indeg[i];
    }
  }
  // Stable Kahn: always take the lowest original index that is ready.
  std::vector<size_t> order;
  order.reserve(n);
  std::vector<bool> done(n, false);
  std::vector<size_t> ready;
  for (size_t i = 0; i < n; ++i)
    if (indeg[i] == 0) ready.push_back(i);
  std::make_heap(ready.begin(), ready.end(), std::greater<>());
  while (!ready.empty()) {
    std::pop_heap(ready.begin(), ready.end(), std::greater<>());
    size_t i = ready.back();
    ready.pop_back();
    order.push_back(i);
    for (size_t s : succ[i])
      if (--indeg[s] == 0) {
        ready.push_back(s);
        std::push_heap(ready.begin(), ready.end(), std::greater<>());
      }
  }
  if (order.size() != n) throw std::runtime_error("graph '" + name + "' has a cycle");
  std::vector<std::unique_ptr<Node>> sorted;
  sorted.reserve(n);
  for (size_t i : order) sorted.push_back(std::move(nodes_[i]));
  nodes_ = std::move(sorted);
}

}  // namespace vkc::ir
