// Small helpers that build IR graphs for tests.
#pragma once

#include <cstring>
#include <string>
#include <vector>

#include "vkc/ir/graph.h"

namespace vkc::testing {

inline ir::TensorType f32(std::vector<int64_t> sizes) { return {ir::DType::Float32, ir::Shape::of(sizes)}; }

inline ir::Value* input(ir::Graph& g, const std::string& name, ir::TensorType t) {
  ir::Value* v = g.add_value(name, std::move(t));
  g.inputs.push_back(v);
  return v;
}

inline ir::Value* constant(ir::Graph& g, const std::string& name, std::vector<int64_t> sizes, std::vector<float> values) {
  std::vector<uint8_t> bytes(values.size() * 4);
  if (!bytes.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
  return g.add_constant(name, f32(std::move(sizes)), ir::TensorData::owned(std::move(bytes)));
}

inline ir::Value* constant_i64(ir::Graph& g, const std::string& name, std::vector<int64_t> values) {
  std::vector<uint8_t> bytes(values.size() * 8);
  if (!bytes.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
  return g.add_constant(name, {ir::DType::Int64, ir::Shape::of({static_cast<int64_t>(values.size())})},
                        ir::TensorData::owned(std::move(bytes)));
}

/// An ONNX-domain node with one output of type `out`.
inline ir::Node* onnx(ir::Graph& g, const std::string& op, std::vector<ir::Value*> ins, ir::TensorType out,
                      ir::AttributeMap attrs = {}, int64_t opset = 17) {
  ir::Node* n = g.add_node(ir::kOnnxDomain, op, std::move(ins), {std::move(out)}, g.unique_name(op));
  n->attrs() = std::move(attrs);
  n->set_opset(opset);
  return n;
}

/// A runtime-operator node with outputs of the given types.
inline ir::Node* runtime(ir::Graph& g, const std::string& op, std::vector<ir::Value*> ins,
                         std::vector<ir::TensorType> outs, ir::AttributeMap attrs = {}) {
  ir::Node* n = g.add_node(ir::kVulkanDomain, op, std::move(ins), std::move(outs));
  n->attrs() = std::move(attrs);
  return n;
}

inline std::vector<float> floats(const ir::Value* v) {
  auto s = v->data().as<float>();
  return {s.begin(), s.end()};
}

inline std::vector<int64_t> ints(const ir::Value* v) {
  auto s = v->data().as<int64_t>();
  return {s.begin(), s.end()};
}

}  // namespace vkc::testing
