#include "onnx_model_checks.h"

#include <fmt/format.h>
#include <onnx/checker.h>
#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>

#include <set>
#include <unordered_map>
#include <unordered_set>

#include "vkc/compiler/onnx_importer.h"
#include "vkc/ir/graph.h"

namespace vkc::compiler::detail {

std::string normalize_domain(const std::string& domain) {
  return domain == "ai.onnx" ? std::string() : domain;
}

std::string describe_node(const std::string& name, const onnx::NodeProto& node) {
  std::string domain = normalize_domain(node.domain());
  std::string op = domain.empty() ? node.op_type() : domain + "::" + node.op_type();
  if (name.empty() && node.output_size() > 0)  // an unnamed node is known by what it writes
    return fmt::format("node ({}) writing '{}'", op, node.output(0));
  return fmt::format("node '{}' ({})", name, op);
}

std::vector<std::string> unique_node_names(const onnx::GraphProto& graph) {
  std::unordered_set<std::string> onnx_names;
  for (const auto& node : graph.node()) onnx_names.insert(node.name());
  std::unordered_set<std::string> taken;
  std::unordered_map<std::string, int> next_suffix;
  std::vector<std::string> names;
  names.reserve(graph.node_size());
  for (const auto& node : graph.node()) {
    std::string name = node.name();
    if (name.empty() || taken.count(name)) {
      const std::string base = name.empty() ? node.op_type() : name;
      do {
        name = fmt::format("{}_{}", base, next_suffix[base]++);
      } while (onnx_names.count(name) || taken.count(name));
    }
    taken.insert(name);
    names.push_back(std::move(name));
  }
  return names;
}

// The newest ai.onnx opset whose operator definitions vkc follows; newer versions are refused rather
// than guessed at.
constexpr int64_t kNewestOnnxOpset = 25;

std::map<std::string, int64_t> listed_opsets(const onnx::ModelProto& model) {
  std::map<std::string, int64_t> opsets;
  for (const auto& import : model.opset_import()) {
    std::string domain = normalize_domain(import.domain());
    if (domain == ir::kOnnxDomain || domain == ir::kMicrosoftDomain || domain == "ai.onnx.ml")
      opsets.emplace(std::move(domain), import.version());
  }
  return opsets;
}

void check_supported_nodes(const onnx::GraphProto& graph, const std::vector<std::string>& names,
                           const std::map<std::string, int64_t>& opsets) {
  for (int i = 0; i < graph.node_size(); ++i) {
    const auto& node = graph.node(i);
    const std::string domain = normalize_domain(node.domain());
    if (domain != ir::kOnnxDomain && domain != ir::kMicrosoftDomain)
      throw ImportError(
          fmt::format("{}: unsupported operator domain '{}'", describe_node(names[i], node), node.domain()));
    if (!opsets.count(domain))
      throw ImportError(
          fmt::format("{}: the model has no opset import for domain '{}'", describe_node(names[i], node), domain));
    if (domain == ir::kOnnxDomain && (opsets.at(domain) < 1 || opsets.at(domain) > kNewestOnnxOpset))
      throw ImportError(fmt::format("opset {} of the ONNX domain is not one vkc knows (1 to {})", opsets.at(domain),
                                    kNewestOnnxOpset));
    // If's branches are inlined by predication, a Loop's or Scan's body unrolled (onnx_graph_builder.cpp).
    const bool is_if = domain == ir::kOnnxDomain &&
                       (node.op_type() == "If" || node.op_type() == "Loop" || node.op_type() == "Scan");
    for (const auto& attr : node.attribute()) {
      const bool graph = attr.type() == onnx::AttributeProto_AttributeType_GRAPH ||
                         attr.type() == onnx::AttributeProto_AttributeType_GRAPHS || attr.has_g() ||
                         attr.graphs_size() > 0;
      if (graph && !is_if)
        throw ImportError(fmt::format("{}: subgraph attributes are not supported (only If's branches and Loop's and Scan's bodies are)",
                                      describe_node(names[i], node)));
      if (graph && attr.has_g()) {  // If's branches, Loop's and Scan's bodies: their nodes obey the same rules
        std::vector<std::string> inner;
        for (int j = 0; j < attr.g().node_size(); ++j)
          inner.push_back(attr.g().node(j).name().empty() ? fmt::format("{}/{}#{}", names[i], attr.name(), j)
                                                           : attr.g().node(j).name());
        check_supported_nodes(attr.g(), inner, opsets);
      }
    }
  }
}

std::string first_line(const char* message) {
  std::string s(message);
  return s.substr(0, s.find('\n'));
}

void warm_schema_registry() { (void)onnx::OpSchemaRegistry::Schema("Relu", 14, ""); }

namespace {

bool adopt_in_graph(onnx::GraphProto& graph) {
  bool moved = false;
  for (auto& node : *graph.mutable_node()) {
    if ((node.domain().empty() || node.domain() == "ai.onnx") && node.op_type() == "SimplifiedLayerNormalization") {
      node.set_domain(std::string(ir::kMicrosoftDomain));
      moved = true;
    }
    for (auto& attr : *node.mutable_attribute()) {
      if (attr.has_g()) moved = adopt_in_graph(*attr.mutable_g()) || moved;
      for (auto& sub : *attr.mutable_graphs()) moved = adopt_in_graph(sub) || moved;
    }
  }
  return moved;
}

}  // namespace

void adopt_onnxruntime_onnx_domain_ops(onnx::ModelProto& model) {
  if (!adopt_in_graph(*model.mutable_graph())) return;
  for (const auto& import : model.opset_import())
    if (import.domain() == ir::kMicrosoftDomain) return;
  auto* import = model.add_opset_import();
  import->set_domain(std::string(ir::kMicrosoftDomain));
  import->set_version(1);
}

void run_onnx_checker(onnx::ModelProto& model, const std::filesystem::path& model_dir) {
  // libonnx 1.12 rejects every IR version above its own ("higher than the checker's") although
  // it can still read those models; they are left to vkc's own checks.
  if (model.ir_version() > onnx::Version::IR_VERSION) return;
  // Likewise an ai.onnx opset newer than the library's schemas (18+ for libonnx 1.12): it would
  // check those nodes against older schemas (ReduceMean's axes input, Split's num_outputs, ...).
  const auto& known = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
  for (const auto& import : model.opset_import())
    if ((import.domain().empty() || import.domain() == "ai.onnx") && known.count("") &&
        import.version() > known.at("").second)
      return;
  if (model.ir_version() <= 0) throw ImportError("the model has no ir_version");
  // libonnx 1.12 requires a shape on every graph output's tensor type, which the format leaves
  // optional (onnx.helper writes outputs without one; onnxruntime and newer checkers accept them):
  // such outputs carry a rank-0 placeholder during the check, removed after it.
  std::vector<onnx::TypeProto_Tensor*> placeholders;
  for (auto& out : *model.mutable_graph()->mutable_output())
    if (out.type().has_tensor_type() && !out.type().tensor_type().has_shape()) {
      placeholders.push_back(out.mutable_type()->mutable_tensor_type());
      placeholders.back()->mutable_shape();
    }
  struct Restore {
    std::vector<onnx::TypeProto_Tensor*>& ts;
    ~Restore() {
      for (auto* t : ts) t->clear_shape();
    }
  } restore{placeholders};
  // The graph and function checks of onnx::checker::check_model(const ModelProto&), which would
  // look for external data files in the working directory, run with the model directory set.
  try {
    onnx::checker::CheckerContext ctx;
    ctx.set_ir_version(static_cast<int>(model.ir_version()));
    ctx.set_model_dir(model_dir.string());
    std::unordered_map<std::string, int> opsets;
    for (const auto& import : model.opset_import()) opsets[import.domain()] = static_cast<int>(import.version());
    ctx.set_opset_imports(opsets);
    onnx::checker::LexicalScopeContext lex;
    onnx::checker::check_graph(model.graph(), ctx, lex);
    if (model.ir_version() >= 8) onnx::checker::check_model_local_functions(model, ctx, lex);
  } catch (const std::exception& e) {
    throw ImportError("ONNX checker: " + first_line(e.what()));
  }
}

namespace {

void check_value_types(const google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>& values, const char* kind) {
  for (const auto& v : values)
    if (v.type().has_tensor_type() && !onnx::TensorProto_DataType_IsValid(v.type().tensor_type().elem_type()))
      throw ImportError(fmt::format("{} '{}' has an unknown element type {}", kind, v.name(),
                                    v.type().tensor_type().elem_type()));
}

// The node gives every input its ONNX schema requires (a formal input that is neither optional nor
// variadic, before the last one given or not): passes read them unchecked.
void check_required_inputs(const onnx::NodeProto& node, const std::string& what, int64_t onnx_opset) {
  if (!node.domain().empty() && node.domain() != "ai.onnx") return;
  const onnx::OpSchema* schema = onnx::OpSchemaRegistry::Schema(node.op_type(), static_cast<int>(onnx_opset), "");
  if (!schema) return;
  const auto& formal = schema->inputs();
  for (size_t i = 0; i < formal.size(); ++i) {
    if (formal[i].GetOption() != onnx::OpSchema::Single) continue;
    if (static_cast<int>(i) >= node.input_size() || node.input(static_cast<int>(i)).empty())
      throw ImportError(fmt::format("{}: required input {} ('{}') is missing", what, i, formal[i].GetName()));
  }
}

void check_scope(const onnx::GraphProto& graph, const std::vector<std::string>* names,
                 std::unordered_set<std::string> visible, int64_t onnx_opset) {
  check_value_types(graph.input(), "graph input");
  check_value_types(graph.output(), "graph output");
  check_value_types(graph.value_info(), "value");
  for (const auto& v : graph.input()) visible.insert(v.name());
  for (const auto& t : graph.initializer()) visible.insert(t.name());
  for (int i = 0; i < graph.node_size(); ++i) {
    const auto& node = graph.node(i);
    const std::string what = describe_node(names ? (*names)[i] : node.name(), node);
    for (const std::string& in : node.input())
      if (!in.empty() && !visible.count(in))
        throw ImportError(fmt::format("{}: input '{}' is not defined by any node, initializer or graph input", what, in));
    check_required_inputs(node, what, onnx_opset);
    if (node.output_size() == 0) throw ImportError(fmt::format("{}: the node has no outputs", what));
    for (const auto& attr : node.attribute()) {
      if (attr.has_g()) check_scope(attr.g(), nullptr, visible, onnx_opset);
      for (const auto& g : attr.graphs()) check_scope(g, nullptr, visible, onnx_opset);
    }
    for (const std::string& out : node.output()) visible.insert(out);
  }
}

}  // namespace

void check_structure(const onnx::GraphProto& graph, const std::vector<std::string>& names, int64_t onnx_opset) {
  check_scope(graph, &names, {}, onnx_opset);
}

void sort_nodes(onnx::GraphProto& graph) {
  const int n = graph.node_size();
  std::unordered_map<std::string, int> producer;  // value name -> node index
  for (int i = 0; i < n; ++i)
    for (const std::string& out : graph.node(i).output())
      if (!out.empty()) producer.emplace(out, i);
  // Graph inputs, initializers and omitted ("") inputs have no producer: available from the start.
  std::vector<std::vector<int>> users(n);
  std::vector<int> waiting(n, 0);
  bool sorted = true;
  for (int i = 0; i < n; ++i) {
    std::unordered_set<int> deps;
    for (const std::string& in : graph.node(i).input()) {
      auto it = producer.find(in);
      if (in.empty() || it == producer.end()) continue;
      if (it->second == i)
        throw ImportError(fmt::format("{} reads its own output '{}': the graph has a cycle",
                                      describe_node(graph.node(i).name(), graph.node(i)), in));
      if (deps.insert(it->second).second) {
        users[it->second].push_back(i);
        ++waiting[i];
        sorted = sorted && it->second < i;
      }
    }
  }
  if (sorted) return;
  // Kahn's algorithm, always taking the lowest-numbered ready node (keeps the file's order where it can).
  std::set<int> ready;
  for (int i = 0; i < n; ++i)
    if (waiting[i] == 0) ready.insert(i);
  std::vector<int> order;
  order.reserve(static_cast<size_t>(n));
  while (!ready.empty()) {
    const int i = *ready.begin();
    ready.erase(ready.begin());
    order.push_back(i);
    for (int u : users[i])
      if (--waiting[u] == 0) ready.insert(u);
  }
  if (static_cast<int>(order.size()) != n)
    for (int i = 0; i < n; ++i)
      if (waiting[i] > 0)
        throw ImportError(
            fmt::format("the graph has a cycle through {}", describe_node(graph.node(i).name(), graph.node(i))));
  google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
  nodes.Reserve(n);
  for (int i : order) *nodes.Add() = std::move(*graph.mutable_node(i));
  graph.mutable_node()->Swap(&nodes);
}

}  // namespace vkc::compiler::detail
