#include "onnx_graph_builder.h"

#include <fmt/format.h>

#include <algorithm>
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
      if (!is_constant_node(proto_.node(i))) add_node(proto_.node(i), names_[i], std::move(outputs[i]), nullptr);
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

  /// Names a branch of an If defines, renamed into the graph (inner scopes first, then the graph).
  struct Scope {
    const Scope* outer = nullptr;
    std::unordered_map<std::string, ir::Value*> values;
  };

  ir::Value* lookup(const std::string& name, const Scope* scope) const {
    for (const Scope* s = scope; s; s = s->outer)
      if (auto it = s->values.find(name); it != s->values.end()) return it->second;
    return graph_.find_value(name);
  }

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

  void add_node(const onnx::NodeProto& node, const std::string& name, std::vector<ir::Value*> outputs,
                const Scope* scope) {
    const std::string where = describe_node(name, node);
    std::vector<ir::Value*> inputs;
    for (const std::string& in : node.input()) {
      ir::Value* v = in.empty() ? nullptr : lookup(in, scope);
      if (!in.empty() && !v)
        throw ImportError(
            fmt::format("{}: input '{}' is not defined by any node, initializer or graph input", where, in));
      inputs.push_back(v);
    }
    // An omitted output between produced ones still holds its position: give it an unused value.
    for (auto& out : outputs)
      if (!out) out = graph_.add_value(graph_.unique_name(name + "_unused"), {});
    const std::string domain = normalize_domain(node.domain());
    if (domain == ir::kOnnxDomain && node.op_type() == "If") return inline_if(node, name, inputs, outputs, scope);
    if (domain == ir::kOnnxDomain && node.op_type() == "Loop") return unroll_loop(node, name, inputs, outputs, scope);
    if (domain == ir::kOnnxDomain && node.op_type() == "Scan") return unroll_scan(node, name, inputs, outputs, scope);
    ir::Node* n = graph_.add_node_with_outputs(domain, node.op_type(), std::move(inputs), std::move(outputs), name);
    n->set_opset(graph_.opsets.at(domain));
    for (const auto& a : node.attribute()) n->set_attr(a.name(), to_ir_attribute(a, where, reader_));
  }

  /// If, by predication: both branches are inlined (their values renamed under the If's name) and
  /// each output becomes Where(cond, then_output, else_output). Branches are pure, so computing the
  /// untaken one too changes no result; a constant condition folds later. Outputs whose branches
  /// differ in type or shape, or are not known (static) yet, become vkc::IfSelect: the taken branch once the
  /// condition folds (the other's nodes then die), else a Where once both shapes are known equal.
  void inline_if(const onnx::NodeProto& node, const std::string& name, const std::vector<ir::Value*>& inputs,
                 const std::vector<ir::Value*>& outputs, const Scope* scope) {
    const std::string where = describe_node(name, node);
    std::vector<ir::Value*> branch_outputs[2];
    for (const auto& a : node.attribute()) {
      const int k = a.name() == "then_branch" ? 0 : a.name() == "else_branch" ? 1 : -1;
      if (k < 0 || !a.has_g()) throw ImportError(fmt::format("{}: unexpected attribute '{}'", where, a.name()));
      branch_outputs[k] = inline_branch(a.g(), name + "/" + a.name(), scope);
    }
    for (size_t j = 0; j < outputs.size(); ++j) {
      if (j >= branch_outputs[0].size() || j >= branch_outputs[1].size())
        throw ImportError(fmt::format("{}: a branch has fewer outputs than the If", where));
      ir::Value* a = branch_outputs[0][j];
      ir::Value* b = branch_outputs[1][j];
      if (!a->type().known() || !b->type().known() || a->type() != b->type() || !a->shape().is_static()) {
        // Branches of different (or not yet known) types or shapes: no elementwise select is known
        // to be exact. The choice waits for the condition to fold to a constant, or for the shapes
        // to turn out equal (fold-constants resolves vkc::IfSelect either way).
        ir::Node* n = graph_.add_node_with_outputs(std::string(ir::kVkcDomain), "IfSelect", {inputs.at(0), a, b},
                                                   {outputs[j]}, graph_.unique_name(name + "/select"));
        n->set_opset(1);
        // How many If branches enclose this If (inline_branch names their values "<If>/<branch>/..."):
        // a program split on run-time conditions binds outer ones first (compiler/src/branch_programs.h).
        int64_t nesting = 0;
        for (size_t at = 0; (at = name.find("_branch/", at)) != std::string::npos; ++at) ++nesting;
        n->set_attr("nesting", nesting);
        continue;
      }
      ir::Node* n = graph_.add_node_with_outputs(ir::kOnnxDomain, "Where", {inputs.at(0), a, b}, {outputs[j]},
                                                 graph_.unique_name(name + "/select"));
      n->set_opset(graph_.opsets.at(std::string(ir::kOnnxDomain)));
    }
  }

  /// Loop with a constant trip count and a condition that stays true (absent or constant true on
  /// entry, passed through or constant true in the body): the body inlined once per iteration, its
  /// carried values chained, each scan output stacked along a new axis 0. Bounded, so that a big
  /// trip count is refused rather than unrolled into a huge graph.
  void unroll_loop(const onnx::NodeProto& node, const std::string& name, const std::vector<ir::Value*>& inputs,
                   const std::vector<ir::Value*>& outputs, const Scope* scope) {
    const std::string where = describe_node(name, node);
    const onnx::GraphProto* body = nullptr;
    for (const auto& a : node.attribute())
      if (a.name() == "body" && a.has_g()) body = &a.g();
    if (!body) throw ImportError(fmt::format("{}: no body graph", where));
    auto constant_int = [](const ir::Value* v) -> std::optional<int64_t> {
      if (!v || !v->is_constant() || v->shape().numel() != 1) return std::nullopt;
      if (v->dtype() == ir::DType::Int64) return v->data().as<int64_t>()[0];
      if (v->dtype() == ir::DType::Bool) return v->data().as<uint8_t>()[0] ? 1 : 0;
      return std::nullopt;
    };
    const auto trips = constant_int(inputs.size() > 0 ? inputs[0] : nullptr);
    if (!trips || *trips < 0)
      throw ImportError(fmt::format("{}: Loop without a constant trip count cannot be unrolled", where));
    const ir::Value* cond = inputs.size() > 1 ? inputs[1] : nullptr;
    if (cond && constant_int(cond) != 1)
      throw ImportError(fmt::format("{}: Loop whose condition is not constant true cannot be unrolled", where));
    const size_t carried = inputs.size() > 2 ? inputs.size() - 2 : 0;
    if (static_cast<size_t>(body->input_size()) != carried + 2 || static_cast<size_t>(body->output_size()) < carried + 1)
      throw ImportError(fmt::format("{}: the body's inputs and outputs do not match the Loop's", where));
    constexpr int64_t kMaxUnrolledNodes = 20000;
    if (*trips > kMaxUnrolledNodes / std::max(1, body->node_size()))
      throw ImportError(fmt::format("{}: {} iterations of a {}-node body exceed the unrolling bound of {} nodes", where,
                                    *trips, body->node_size(), kMaxUnrolledNodes));
    const size_t scans = static_cast<size_t>(body->output_size()) - carried - 1;
    std::vector<ir::Value*> state(inputs.begin() + std::min<size_t>(2, inputs.size()), inputs.end());
    std::vector<std::vector<ir::Value*>> scanned(scans);
    ir::Value* true_value = nullptr;
    for (int64_t i = 0; i < *trips; ++i) {
      std::unordered_map<std::string, ir::Value*> bound;
      std::vector<uint8_t> iter_bytes(8);
      std::memcpy(iter_bytes.data(), &i, 8);
      bound[body->input(0).name()] = graph_.add_constant(graph_.unique_name(name + "/iter"),
                                                         {ir::DType::Int64, ir::Shape::of({})},
                                                         ir::TensorData::owned(std::move(iter_bytes)));
      if (!true_value)
        true_value = graph_.add_constant(graph_.unique_name(name + "/true"), {ir::DType::Bool, ir::Shape::of({})},
                                         ir::TensorData::owned(std::vector<uint8_t>{1}));
      bound[body->input(1).name()] = true_value;
      for (size_t k = 0; k < carried; ++k) bound[body->input(static_cast<int>(k) + 2).name()] = state[k];
      const auto outs = inline_branch(*body, fmt::format("{}/iter{}", name, i), scope, &bound);
      const ir::Value* next_cond = outs.at(0);
      if (next_cond != true_value && constant_int(next_cond) != 1 &&
          !(next_cond->producer() && next_cond->producer()->is_onnx("Identity") &&
            next_cond->producer()->input(0) == true_value))
        throw ImportError(fmt::format("{}: the body computes its condition (a while loop): not unrolled", where));
      for (size_t k = 0; k < carried; ++k) state[k] = outs.at(1 + k);
      for (size_t k = 0; k < scans; ++k) scanned[k].push_back(outs.at(1 + carried + k));
    }
    const int64_t opset = graph_.opsets.at(std::string(ir::kOnnxDomain));
    auto onnx_node = [&](const char* op, std::vector<ir::Value*> ins, ir::Value* out) {
      ir::Node* n = out ? graph_.add_node_with_outputs(ir::kOnnxDomain, op, std::move(ins), {out}, graph_.unique_name(name + "/" + op))
                        : graph_.add_node(ir::kOnnxDomain, op, std::move(ins), {ir::TensorType{}}, graph_.unique_name(name + "/" + op));
      n->set_opset(opset);
      return n;
    };
    for (size_t j = 0; j < outputs.size(); ++j) {
      if (j < carried) {  // the final carried value (the initial one for zero iterations)
        onnx_node("Identity", {state[j]}, outputs[j]);
        continue;
      }
      const size_t k = j - carried;
      if (k >= scans) throw ImportError(fmt::format("{}: output {} has no body output", where, j));
      if (scanned[k].empty()) throw ImportError(fmt::format("{}: a scan output of zero iterations is not supported", where));
      std::vector<ir::Value*> rows;
      for (ir::Value* v : scanned[k]) {
        ir::Node* u = opset >= 13 ? onnx_node("Unsqueeze", {v, graph_.add_constant(graph_.unique_name(name + "/axes"),
                                                               {ir::DType::Int64, ir::Shape::of({1})},
                                                               ir::TensorData::owned(std::vector<uint8_t>(8, 0)))}, nullptr)
                                  : onnx_node("Unsqueeze", {v}, nullptr);
        if (opset < 13) u->set_attr("axes", std::vector<int64_t>{0});
        rows.push_back(u->output(0));
      }
      ir::Node* c = onnx_node("Concat", rows, outputs[j]);
      c->set_attr("axis", int64_t{0});
    }
  }

  /// Scan (opset 9+) over scan inputs whose scanned axis has a static length: the body inlined once
  /// per step, its state values chained; step t reads slice t (or T-1-t, reversed) of each scan
  /// input along its axis (Gather of a scalar index), and each scan output stacks its per-step
  /// values along its axis (in reverse for reversed outputs). Bounded like Loop.
  void unroll_scan(const onnx::NodeProto& node, const std::string& name, const std::vector<ir::Value*>& inputs,
                   const std::vector<ir::Value*>& outputs, const Scope* scope) {
    const std::string where = describe_node(name, node);
    const int64_t opset = graph_.opsets.at(std::string(ir::kOnnxDomain));
    if (opset < 9) throw ImportError(fmt::format("{}: Scan before opset 9 (sequence_lens) is not supported", where));
    const onnx::GraphProto* body = nullptr;
    int64_t num_scan = -1;
    std::vector<int64_t> in_axes, in_dirs, out_axes, out_dirs;
    for (const auto& a : node.attribute()) {
      if (a.name() == "body" && a.has_g()) body = &a.g();
      else if (a.name() == "num_scan_inputs") num_scan = a.i();
      else if (a.name() == "scan_input_axes") in_axes.assign(a.ints().begin(), a.ints().end());
      else if (a.name() == "scan_input_directions") in_dirs.assign(a.ints().begin(), a.ints().end());
      else if (a.name() == "scan_output_axes") out_axes.assign(a.ints().begin(), a.ints().end());
      else if (a.name() == "scan_output_directions") out_dirs.assign(a.ints().begin(), a.ints().end());
    }
    if (!body) throw ImportError(fmt::format("{}: no body graph", where));
    if (num_scan < 1 || static_cast<size_t>(num_scan) > inputs.size())
      throw ImportError(fmt::format("{}: num_scan_inputs {} does not fit its {} inputs", where, num_scan, inputs.size()));
    const size_t m = static_cast<size_t>(num_scan), n = inputs.size() - m;
    if (static_cast<size_t>(body->input_size()) != n + m || static_cast<size_t>(body->output_size()) < n ||
        static_cast<size_t>(body->output_size()) != outputs.size())
      throw ImportError(fmt::format("{}: the body's inputs and outputs do not match the Scan's", where));
    const size_t k_out = outputs.size() - n;
    in_axes.resize(m, 0);
    in_dirs.resize(m, 0);
    out_axes.resize(k_out, 0);
    out_dirs.resize(k_out, 0);
    // The scanned length: the same static size along every scan input's axis.
    int64_t steps = -1;
    for (size_t j = 0; j < m; ++j) {
      const ir::Value* v = inputs[n + j];
      if (!v || !v->type().known() || !v->shape().is_static())
        throw ImportError(fmt::format("{}: scan input {} has no static shape (fix the input shapes)", where, j));
      const auto dims = v->shape().sizes();
      int64_t axis = in_axes[j] < 0 ? in_axes[j] + static_cast<int64_t>(dims.size()) : in_axes[j];
      if (axis < 0 || axis >= static_cast<int64_t>(dims.size()))
        throw ImportError(fmt::format("{}: scan_input_axes[{}] = {} is out of range", where, j, in_axes[j]));
      in_axes[j] = axis;
      if (steps >= 0 && dims[axis] != steps)
        throw ImportError(fmt::format("{}: scan inputs disagree on the sequence length ({} and {})", where, steps, dims[axis]));
      steps = dims[axis];
    }
    constexpr int64_t kMaxUnrolledNodes = 20000;
    if (steps * std::max(1, body->node_size() + static_cast<int>(m)) > kMaxUnrolledNodes)
      throw ImportError(fmt::format("{}: {} steps of a {}-node body exceed the unrolling bound of {} nodes", where,
                                    steps, body->node_size(), kMaxUnrolledNodes));
    auto onnx_node = [&](const char* op, std::vector<ir::Value*> ins, ir::Value* out) {
      ir::Node* nd = out ? graph_.add_node_with_outputs(ir::kOnnxDomain, op, std::move(ins), {out},
                                                        graph_.unique_name(name + "/" + op))
                         : graph_.add_node(ir::kOnnxDomain, op, std::move(ins), {ir::TensorType{}},
                                           graph_.unique_name(name + "/" + op));
      nd->set_opset(opset);
      return nd;
    };
    auto i64 = [&](const std::string& base, std::vector<int64_t> values, bool scalar) {
      std::vector<uint8_t> bytes(values.size() * 8);
      std::memcpy(bytes.data(), values.data(), bytes.size());
      return graph_.add_constant(graph_.unique_name(name + "/" + base),
                                 {ir::DType::Int64, scalar ? ir::Shape::of({}) : ir::Shape::of({int64_t(values.size())})},
                                 ir::TensorData::owned(std::move(bytes)));
    };
    std::vector<ir::Value*> state(inputs.begin(), inputs.begin() + static_cast<std::ptrdiff_t>(n));
    std::vector<std::vector<ir::Value*>> scanned(k_out);
    for (int64_t t = 0; t < steps; ++t) {
      std::unordered_map<std::string, ir::Value*> bound;
      for (size_t k = 0; k < n; ++k) bound[body->input(static_cast<int>(k)).name()] = state[k];
      for (size_t j = 0; j < m; ++j) {
        ir::Node* g = onnx_node("Gather", {inputs[n + j], i64("step", {in_dirs[j] ? steps - 1 - t : t}, true)}, nullptr);
        g->set_attr("axis", in_axes[j]);
        bound[body->input(static_cast<int>(n + j)).name()] = g->output(0);
      }
      const auto outs = inline_branch(*body, fmt::format("{}/step{}", name, t), scope, &bound);
      for (size_t k = 0; k < n; ++k) state[k] = outs.at(k);
      for (size_t k = 0; k < k_out; ++k) scanned[k].push_back(outs.at(n + k));
    }
    for (size_t j = 0; j < outputs.size(); ++j) {
      if (j < n) {  // the final state (the initial one for an empty sequence)
        onnx_node("Identity", {state[j]}, outputs[j]);
        continue;
      }
      const size_t k = j - n;
      if (scanned[k].empty()) throw ImportError(fmt::format("{}: a scan output of an empty sequence is not supported", where));
      if (out_dirs[k]) std::reverse(scanned[k].begin(), scanned[k].end());
      std::vector<ir::Value*> rows;
      for (ir::Value* v : scanned[k]) {
        ir::Node* u = opset >= 13 ? onnx_node("Unsqueeze", {v, i64("axes", {out_axes[k]}, false)}, nullptr)
                                  : onnx_node("Unsqueeze", {v}, nullptr);
        if (opset < 13) u->set_attr("axes", std::vector<int64_t>{out_axes[k]});
        rows.push_back(u->output(0));
      }
      ir::Node* c = onnx_node("Concat", rows, outputs[j]);
      c->set_attr("axis", out_axes[k]);
    }
  }

  /// Adds a branch's initializers, constants and nodes; returns its outputs. `bound` gives values
  /// for the graph's inputs (a Loop body's iteration number, condition and carried values).
  std::vector<ir::Value*> inline_branch(const onnx::GraphProto& g, const std::string& prefix, const Scope* outer,
                                        const std::unordered_map<std::string, ir::Value*>* bound = nullptr) {
    Scope s{outer, {}};
    if (bound) s.values = *bound;
    std::unordered_map<std::string, const onnx::TypeProto*> types;
    for (const auto* infos : {&g.value_info(), &g.output()})
      for (const auto& info : *infos) types[info.name()] = &info.type();
    auto fresh = [&](const std::string& n, std::optional<ir::TensorAttr> data = {}) {
      if (s.values.count(n)) throw ImportError(fmt::format("{}: value '{}' is defined twice", prefix, n));
      const std::string unique = graph_.unique_name(prefix + "/" + n);
      auto it = types.find(n);
      ir::Value* v = data ? graph_.add_constant(unique, std::move(data->type), std::move(data->data))
                          : graph_.add_value(unique, it == types.end() ? ir::TensorType{}
                                                                       : tensor_type_from_onnx(*it->second));
      return s.values[n] = v;
    };
    for (const auto& init : g.initializer())
      fresh(init.name(), reader_.read(init, fmt::format("{} initializer '{}'", prefix, init.name())));
    std::vector<std::vector<ir::Value*>> outs(g.node_size());
    for (int i = 0; i < g.node_size(); ++i) {
      const auto& node = g.node(i);
      const std::string label = describe_node(prefix, node);
      if (is_constant_node(node)) {
        fresh(node.output(0), constant_value(node, label, reader_));
        continue;
      }
      for (const std::string& o : node.output()) outs[i].push_back(o.empty() ? nullptr : fresh(o));
    }
    for (int i = 0; i < g.node_size(); ++i)
      if (!is_constant_node(g.node(i)))
        add_node(g.node(i), g.node(i).name().empty() ? fmt::format("{}#{}", prefix, i) : prefix + "/" + g.node(i).name(),
                 std::move(outs[i]), &s);
    std::vector<ir::Value*> result;
    for (const auto& o : g.output()) {
      ir::Value* v = lookup(o.name(), &s);
      if (!v) throw ImportError(fmt::format("{}: output '{}' is not defined", prefix, o.name()));
      result.push_back(v);
    }
    return result;
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
