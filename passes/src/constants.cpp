#include "constants.h"

#include <cstring>

#include "vkc/ir/half.h"

namespace vkc::passes {
namespace {

template <typename T, typename Out>
std::vector<Out> widen(const ir::Value* v) {
  std::vector<Out> out(v->data().size() / sizeof(T));
  for (size_t i = 0; i < out.size(); ++i) {
    T x;
    std::memcpy(&x, v->data().data() + i * sizeof(T), sizeof(T));
    out[i] = static_cast<Out>(x);
  }
  return out;
}

}  // namespace

std::optional<std::vector<float>> constant_floats(const ir::Value* v) {
  if (!v || !v->is_constant()) return std::nullopt;
  switch (v->dtype()) {
    case ir::DType::Float32: return widen<float, float>(v);
    case ir::DType::Float64: return widen<double, float>(v);
    case ir::DType::Float16: {
      std::vector<float> out;
      for (uint16_t h : widen<uint16_t, uint16_t>(v)) out.push_back(ir::half_to_float(h));
      return out;
    }
    default: return std::nullopt;
  }
}

std::optional<std::vector<int64_t>> constant_ints(const ir::Value* v) {
  if (!v || !v->is_constant()) return std::nullopt;
  switch (v->dtype()) {
    case ir::DType::Int64: return widen<int64_t, int64_t>(v);
    case ir::DType::Int32: return widen<int32_t, int64_t>(v);
    case ir::DType::Int16: return widen<int16_t, int64_t>(v);
    case ir::DType::Int8: return widen<int8_t, int64_t>(v);
    case ir::DType::UInt8: return widen<uint8_t, int64_t>(v);
    default: return std::nullopt;
  }
}

std::optional<double> constant_scalar(const ir::Value* v) {
  if (auto f = constant_floats(v); f && f->size() == 1) return (*f)[0];
  if (auto i = constant_ints(v); i && i->size() == 1) return static_cast<double>((*i)[0]);
  return std::nullopt;
}

ir::Value* add_f32_constant(ir::Graph& g, const std::string& name, const std::vector<int64_t>& shape,
                            const std::vector<float>& values) {
  std::vector<uint8_t> bytes(values.size() * sizeof(float));
  if (!bytes.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
  return g.add_constant(g.unique_name(name), ir::TensorType{ir::DType::Float32, ir::Shape::of(shape)},
                        ir::TensorData::owned(std::move(bytes)));
}

ir::Value* add_float_constant(ir::Graph& g, const std::string& name, const std::vector<int64_t>& shape,
                              const std::vector<float>& values, ir::DType dtype) {
  if (dtype != ir::DType::Float16) return add_f32_constant(g, name, shape, values);
  std::vector<uint8_t> bytes(values.size() * sizeof(uint16_t));
  for (size_t i = 0; i < values.size(); ++i) {
    const uint16_t h = ir::float_to_half(values[i]);
    std::memcpy(bytes.data() + i * sizeof(uint16_t), &h, sizeof(h));
  }
  return g.add_constant(g.unique_name(name), ir::TensorType{ir::DType::Float16, ir::Shape::of(shape)},
                        ir::TensorData::owned(std::move(bytes)));
}

ir::Value* add_i64_constant(ir::Graph& g, const std::string& name, const std::vector<int64_t>& shape,
                            const std::vector<int64_t>& values) {
  std::vector<uint8_t> bytes(values.size() * sizeof(int64_t));
  if (!bytes.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
  return g.add_constant(g.unique_name(name), ir::TensorType{ir::DType::Int64, ir::Shape::of(shape)},
                        ir::TensorData::owned(std::move(bytes)));
}

ir::Value* add_onnx_node(ir::Graph& g, const ir::Node* from, const char* op, std::vector<ir::Value*> inputs,
                         const ir::TensorType& type, ir::AttributeMap attrs) {
  ir::Node* m = g.add_node(ir::kOnnxDomain, op, std::move(inputs), {type}, g.unique_name(from->name() + "_" + op), from);
  m->attrs() = std::move(attrs);
  m->set_opset(13);
  return m->output(0);
}

}  // namespace vkc::passes
