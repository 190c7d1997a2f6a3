#include "onnx_graph_builder.h"

#include <fmt/format.h>
#include <onnx/onnx_pb.h>

#include <charconv>
#include <cstring>
#include <optional>
#include <unordered_map>

#include "onnx_model_checks.h"
#include "onnx_tensor.h"
#include "vkc/compiler/onnx_importer.h"

namespace vkc::compiler::detail {

namespace {

/// The double closest to the shortest decimal that round-trips `f` (0.2f -> 0.2, not
/// 0.200000003): what the exporter wrote, and still exactly `f` when narrowed back.
double widen(float f) {
  char buf[32];
  auto end = std::to_chars(buf, buf + sizeof(buf), f).ptr;
  double d = 0;
  std::from_chars(buf, end, d);
  return d;
}

/// A scalar (rank 0) or 1-D tensor of `values`.
template <typename T>
ir::TensorAttr literal(ir::DType dtype, const std::vector<T>& values, bool scalar) {
  std::vector<uint8_t> bytes(values.size() * sizeof(T));
  if (!bytes.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
  std::vector<int64_t> dims;
  if (!scalar) dims.push_back(static_cast<int64_t>(values.size()));
  return {ir::TensorType{dtype, ir::Shape::of(dims)}, ir::TensorData::owned(std::move(bytes))};
}

/// The tensor a Constant node defines, from whichever value attribute it has.
ir::TensorAttr constant_value(const onnx::NodeProto& node, const std::string& label, const TensorReader& reader) {
  if (node.output_size() != 1 || node.attribute_size() != 1)
    throw ImportError(fmt::format("{}: expected one output and one value attribute", label));
  const auto& a = node.attribute(0);
  using ir::DType;
  if (a.name() == "value") return reader.read(a.t(), label + " attribute 'value'");
  if (a.name() == "value_float") return literal(DType::Float32, std::vector<float>{a.f()}, true);
  if (a.name() == "value_floats")
    return literal(DType::Float32, std::vector<float>(a.floats().begin(), a.floats().end()), false);
  if (a.name() == "value_int") return literal(DType::Int64, std::vector<int64_t>{a.i()}, true);
  if (a.name() == "value_ints")
    return literal(DType::Int64, std::vector<int64_t>(a.ints().begin(), a.ints().end()), false);
  throw ImportError(fmt::format("{}: constant attribute '{}' is not supported", label, a.name()));
}

ir::Attribute to_ir_attribute(const onnx::AttributeProto& a, const std::string& label, const TensorReader& reader) {
  switch (a.type()) {
    case onnx::AttributeProto_AttributeType_INT: return int64_t{a.i()};
    case onnx::AttributeProto_AttributeType_FLOAT: return widen(a.f());
    case onnx::AttributeProto_AttributeType_STRING: return a.s();
    case onnx::AttributeProto_AttributeType_TENSOR:
      return reader.read(a.t(), fmt::format("{} attribute '{}'", label, a.name()));
    case onnx::AttributeProto_AttributeType_INTS: return std::vector<int64_t>(a.ints().begin(), a.ints().end());
    case onnx::AttributeProto_AttributeType_FLOATS: {
      std::vector<double> values;
      for (float f : a.floats()) values.push_back(widen(f));
      return values;
    }
    case onnx::AttributeProto_AttributeType_STRINGS:
      return std::vector<std::string>(a.strings().begin(), a.strings().end());
    default:
      throw ImportError(fmt::format("{}: attribute '{}' of type {} is not supported", label, a.name(),
                                    onnx::AttributeProto_AttributeType_Name(a.type())));
  }
}

class GraphBuilder {
 public:
  GraphBuilder(const onnx::GraphProto& proto, const std::vector<std::string>& names, const TensorReader& reader,
               ir::Graph& graph)
      : proto_(proto), names_(names), reader_(reader), graph_(graph) {
    for (const auto* infos : {&proto.value_info(), &proto.input(), &proto.output()})
      for (const auto& info : *infos) types_[info.name()] = &info.type();
  }

  void build(std::vector<ir::TensorAttr> initializers) {
    for (int i = 0; i < proto_.initializer_size(); ++i) {
      const std::string& name = proto_.initializer(i).name();
      define(name, fmt::format("initializer '{}'", name), std::move(initializers[i]));
    }
    for (const auto& input : proto_.input()) {
      ir::Value* v = graph_.find_value(input.name());
      if (v && v->is_constant()) continue;  // old IR: initializers are listed as inputs too
      graph_.inputs.push_back(define(input.name(), fmt::format("graph input '{}'", input.name())));
    }
    // Outputs first, so that nodes may use values defined further down the file.
    std::vector<std::vector<ir::Value*>> outputs(proto_.node_size());
    for (int i = 0; i < proto_.node_size(); ++i) outputs[i] = define_outputs(i);
    for (int i = 0; i < proto_.node_size(); ++i)
      if (!is_constant_node(proto_.node(i))) add_node(i, std::move(outputs[i]));
    for (const auto& output : proto_.output()) {
      ir::Value* v = graph_.find_value(output.name());
      if (!v)
        throw ImportError(
            fmt::format("graph output '{}' is not defined by any node, initializer or graph input", output.name()));
      graph_.outputs.push_back(v);
    }
    try {
      graph_.topo_sort();
    } catch (const std::runtime_error& e) {
      throw ImportError(e.what());
    }
  }

 private:
  static bool is_constant_node(const onnx::NodeProto& node) {
    return node.op_type() == "Constant" && normalize_domain(node.domain()).empty();
  }

  std::string label(int i) const { return describe_node(names_[i], proto_.node(i)); }

  ir::TensorType declared_type(const std::string& name) const {
    auto it = types_.find(name);
    return it == types_.end() ? ir::TensorType{} : tensor_type_from_onnx(*it->second);
  }

  /// A new value (a constant when `data` is given); `by` names its definition in errors.
  ir::Value* define(const std::string& name, const std::string& by, std::optional<ir::TensorAttr> data = {}) {
    if (name.empty()) throw ImportError(by + ": defines a value without a name");
    if (graph_.find_value(name)) throw ImportError(fmt::format("{}: value '{}' is defined twice", by, name));
    if (data) return graph_.add_constant(name, std::move(data->type), std::move(data->data));
    return graph_.add_value(name, declared_type(name));
  }

  /// The outputs of node `i`; an omitted output inside the list is left null, trailing ones dropped.
  std::vector<ir::Value*> define_outputs(int i) {
    const auto& node = proto_.node(i);
    if (is_constant_node(node)) {
      define(node.output(0), label(i), constant_value(node, label(i), reader_));
      return {};
    }
    int count = node.output_size();
    while (count > 0 && node.output(count - 1).empty()) --count;
    std::vector<ir::Value*> outputs(count, nullptr);
    for (int j = 0; j < count; ++j)
      if (!node.output(j).empty()) outputs[j] = define(node.output(j), label(i));
    return outputs;
  }

  void add_node(int i, std::vector<ir::Value*> outputs) {
    const auto& node = proto_.node(i);
    std::vector<ir::Value*> inputs;
    for (const std::string& name : node.input()) {
      ir::Value* v = name.empty() ? nullptr : graph_.find_value(name);
      if (!name.empty() && !v)
        throw ImportError(
            fmt::format("{}: input '{}' is not defined by any node, initializer or graph input", label(i), name));
      inputs.push_back(v);
    }
    // An omitted output between produced ones still holds its position: give it an unused value.
    for (auto& out : outputs)
      if (!out) out = graph_.add_value(names_[i] + "_unused", {});
    const std::string domain = normalize_domain(node.domain());
    ir::Node* n =
        graph_.add_node_with_outputs(domain, node.op_type(), std::move(inputs), std::move(outputs), names_[i]);
    n->set_opset(graph_.opsets.at(domain));
    for (const auto& a : node.attribute()) n->set_attr(a.name(), to_ir_attribute(a, label(i), reader_));
  }

  const onnx::GraphProto& proto_;
  const std::vector<std::string>& names_;
  const TensorReader& reader_;
  ir::Graph& graph_;
  std::unordered_map<std::string, const onnx::TypeProto*> types_;
};

}  // namespace

std::vector<ir::TensorAttr> read_initializers(const onnx::GraphProto& proto, const TensorReader& reader) {
  std::vector<ir::TensorAttr> out;
  out.reserve(proto.initializer_size());
  for (const auto& init : proto.initializer())
    out.push_back(reader.read(init, fmt::format("initializer '{}'", init.name())));
  return out;
}

void build_graph(const onnx::GraphProto& proto, const std::vector<std::string>& node_names,
                 std::vector<ir::TensorAttr> initializers, const TensorReader& reader, ir::Graph& graph) {
  GraphBuilder(proto, node_names, reader, graph).build(std::move(initializers));
}

}  // namespace vkc::compiler::detail
