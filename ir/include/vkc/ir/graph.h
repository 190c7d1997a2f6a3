// The vkc IR: a graph of nodes and values in topological order.
//
// A Value is a tensor: a graph input, a constant (bytes attached), or the
// output of exactly one Node. A Node is an operator call identified by
// (domain, op_type): "" / "com.microsoft" for ONNX operators as imported, and
// kVulkanDomain for the ExecuTorch Vulkan runtime operators that lowering
// produces (op_type is then the runtime name, e.g. "aten.convolution.default").
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "vkc/ir/attribute.h"
#include "vkc/ir/shape.h"
#include "vkc/ir/tensor_data.h"

namespace vkc::ir {

inline constexpr std::string_view kOnnxDomain = "";
inline constexpr std::string_view kMicrosoftDomain = "com.microsoft";
inline constexpr std::string_view kVulkanDomain = "vk";
/// vkc's own placeholders between import and folding (IfSelect: an If output whose branches differ).
inline constexpr std::string_view kVkcDomain = "vkc";

class Node;

class Value {
 public:
  const std::string& name() const { return name_; }
  const TensorType& type() const { return type_; }
  void set_type(TensorType t) { type_ = std::move(t); }
  DType dtype() const { return type_.dtype; }
  const Shape& shape() const { return type_.shape; }

  /// The node producing this value; null for graph inputs and constants.
  Node* producer() const { return producer_; }
  bool is_constant() const { return constant_.has_value(); }
  /// Bytes of a constant (row-major, little-endian, dtype of type()).
  const TensorData& data() const { return *constant_; }
  void set_data(TensorData d) { constant_ = std::move(d); }

  /// Scratch marks for one walk over a graph, in place of a set of visited values: `m` comes from
  /// Graph::new_mark(). mark() is true when the value was not marked with `m` yet.
  bool mark(uint64_t m) const {
    if (mark_ == m) return false;
    mark_ = m;
    return true;
  }
  bool marked(uint64_t m) const { return mark_ == m; }

 private:
  friend class Graph;
  friend class Node;
  explicit Value(std::string name, TensorType type) : name_(std::move(name)), type_(std::move(type)) {}
  std::string name_;
  TensorType type_;
  Node* producer_ = nullptr;
  /// The nodes reading this value, one entry per input slot (removed nodes until compact()):
  /// replace_all_uses visits these instead of every node.
  std::vector<Node*> uses_;
  std::optional<TensorData> constant_;
  mutable uint64_t mark_ = 0;
};

class Node {
 public:
  const std::string& name() const { return name_; }
  const std::string& domain() const { return domain_; }
  const std::string& op_type() const { return op_type_; }
  /// "Conv", "com.microsoft.MatMulNBits", "vk.aten.convolution.default".
  std::string qualified_op() const;
  bool is(std::string_view domain, std::string_view op_type) const { return domain_ == domain && op_type_ == op_type; }
  bool is_onnx(std::string_view op_type) const { return is(kOnnxDomain, op_type); }

  /// Opset version of this node's domain at import (0 when not applicable).
  int64_t opset() const { return opset_; }
  void set_opset(int64_t v) { opset_ = v; }

  /// Inputs; an omitted optional input is nullptr.
  const std::vector<Value*>& inputs() const { return inputs_; }
  Value* input(size_t i) const { return i < inputs_.size() ? inputs_[i] : nullptr; }
  size_t num_inputs() const { return inputs_.size(); }
  void set_input(size_t i, Value* v);
  void set_inputs(std::vector<Value*> vs);

  const std::vector<Value*>& outputs() const { return outputs_; }
  Value* output(size_t i = 0) const { return outputs_.at(i); }

  /// Turns this node into another operator in place; its outputs are kept.
  void morph(std::string_view domain, std::string_view op_type, std::vector<Value*> inputs, AttributeMap attrs);

  AttributeMap& attrs() { return attrs_; }
  const AttributeMap& attrs() const { return attrs_; }
  bool has_attr(std::string_view k) const { return attrs_.find(k) != attrs_.end(); }
  const Attribute* attr(std::string_view k) const;
  void set_attr(std::string k, Attribute a) { attrs_[std::move(k)] = std::move(a); }
  int64_t attr_int(std::string_view k, int64_t def) const;
  double attr_float(std::string_view k, double def) const;
  std::string attr_string(std::string_view k, std::string def) const;
  std::vector<int64_t> attr_ints(std::string_view k, std::vector<int64_t> def = {}) const;

 private:
  friend class Graph;
  Node() = default;
  void link_inputs();    // adds this node to its inputs' use lists
  void unlink_inputs();  // removes it from them
  std::string name_, domain_, op_type_;
  int64_t opset_ = 0;
  std::vector<Value*> inputs_;
  std::vector<Value*> outputs_;
  AttributeMap attrs_;
  bool dead_ = false;
};

class Graph {
 public:
  Graph() = default;
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  std::string name = "main";
  /// Opset imports by domain ("" = ai.onnx).
  std::map<std::string, int64_t> opsets;
  /// Things constants may point into (parsed protobuf, mappings): kept alive with the graph.
  std::vector<std::shared_ptr<const void>> keepalive;

  // ---- values
  Value* add_value(std::string name, TensorType type);
  Value* add_constant(std::string name, TensorType type, TensorData data);
  Value* find_value(std::string_view name) const;
  /// A name not used by any value yet, built from `base`.
  std::string unique_name(std::string_view base);

  std::vector<Value*> inputs;
  std::vector<Value*> outputs;
  bool is_output(const Value* v) const;
  bool is_input(const Value* v) const;

  // ---- nodes
  /// Creates a node with new output values of the given types, inserted before `before` (or appended).
  Node* add_node(std::string_view domain, std::string_view op_type, std::vector<Value*> inputs,
                 std::vector<TensorType> output_types, std::string name = {}, const Node* before = nullptr);
  /// Creates a node whose outputs are existing, not yet produced values (used by the importer).
  Node* add_node_with_outputs(std::string_view domain, std::string_view op_type, std::vector<Value*> inputs,
                              std::vector<Value*> outputs, std::string name = {});
  /// Keeps only `outputs` (a subset of n's outputs) as n's outputs; the others lose their producer.
  void set_outputs(Node* n, std::vector<Value*> outputs);
  /// Adds one more output value to `n`.
  Value* add_node_output(Node* n, TensorType type);
  /// Marks the node for removal; its outputs stay (callers reroute their uses first).
  void remove_node(Node* n);
  /// Nodes in topological order (dead ones excluded).
  std::vector<Node*> nodes() const;
  size_t num_nodes() const;

  // ---- edits
  /// Every use of `from` (node inputs and graph outputs) now uses `to`.
  void replace_all_uses(Value* from, Value* to);
  /// The nodes that read `v`, in topological order.
  std::vector<Node*> users(const Value* v) const;
  /// Drops removed nodes and values nothing refers to.
  void compact();
  /// Reorders nodes topologically (stable); throws std::runtime_error on a cycle.
  void topo_sort();

  /// All values (including unreferenced ones until compact()).
  std::vector<Value*> values() const;

  /// A mark no value carries yet (unique in the process), for Value::mark(). A walk that marks
  /// values must not run in two threads over the same graph at once.
  static uint64_t new_mark();

 private:
  void drop_dead_nodes();
  std::vector<std::unique_ptr<Node>> nodes_;
  std::vector<std::unique_ptr<Value>> values_;
  std::unordered_map<std::string, Value*> by_name_;
  uint64_t name_counter_ = 0;
  uint64_t node_counter_ = 0;
};

}  // namespace vkc::ir
