#include "onnx_shape_inference.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <map>
#include <memory>
#include <set>
#include <string_view>
#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include "dim_expression.h"
#include "onnx_model_checks.h"
#include "vkc/compiler/onnx_importer.h"

namespace vkc::compiler::detail {

namespace {

// libonnx 1.12's Conv/pool shape functions index their inputs' dims by the spatial rank the weight
// or the attributes give, without checking the input has them (a rank-2 input to a 2-D Conv read
// past its dims and crashed; found by fuzzing). This registry hands out the library's schemas with
// those functions wrapped: a node runs the function only when its data inputs have shapes of one
// rank (at least 3) and its kernel_shape/strides/dilations/pads agree with it; otherwise its
// outputs stay as declared and vkc's own checks report the node.
class GuardedSchemas final : public onnx::ISchemaRegistry {
 public:
  const onnx::OpSchema* GetSchema(const std::string& key, const int version,
                                  const std::string& domain) const override {
    const onnx::OpSchema* s = onnx::OpSchemaRegistry::Instance()->GetSchema(key, version, domain);
    if (!s || !s->has_type_and_shape_inference_function()) return s;
    auto it = wrapped_.find(s);
    if (it != wrapped_.end()) return it->second.get();
    if (const int shape_input = shape_tensor_input(key, domain); shape_input >= 0) {
      // The output's rank is the length of a 1-D shape tensor: a length no tensor could have (a
      // Range over constants claiming 1e16 elements, found by fuzzing) would make libonnx build that
      // many dims. Such a node keeps its declared outputs; vkc's own checks report it.
      auto copy = std::make_unique<onnx::OpSchema>(*s);
      copy->TypeAndShapeInferenceFunction([fn = s->GetTypeAndShapeInferenceFunction(), shape_input](
                                              onnx::InferenceContext& ctx) {
        if (ctx.getNumInputs() > static_cast<size_t>(shape_input)) {
          const onnx::TypeProto* t = ctx.getInputType(static_cast<size_t>(shape_input));
          if (t && t->has_tensor_type() && t->tensor_type().has_shape()) {
            for (const auto& d : t->tensor_type().shape().dim())
              if (d.has_dim_value() && (d.dim_value() < 0 || d.dim_value() > kMaxRank)) return;
          }
        }
        fn(ctx);
      });
      return wrapped_.emplace(s, std::move(copy)).first->second.get();
    }
    const size_t required = required_typed_inputs(key, domain);
    if (required == 0) return s;
    auto copy = std::make_unique<onnx::OpSchema>(*s);
    copy->TypeAndShapeInferenceFunction([fn = s->GetTypeAndShapeInferenceFunction(), required](
                                            onnx::InferenceContext& ctx) {
      if (ctx.getNumInputs() < required) return;
      int rank = -1;
      for (size_t i = 0; i < required; ++i) {
        if (required == 4 && i % 3 != 0) continue;  // QLinearConv: x (0) and w (3); the rest are scales
        const onnx::TypeProto* t = ctx.getInputType(i);
        if (!t || !t->has_tensor_type() || !t->tensor_type().has_shape()) return;
        const int r = t->tensor_type().shape().dim_size();
        if (r < 3 || (rank >= 0 && r != rank)) return;
        rank = r;
      }
      const int spatial = rank - 2;
      for (const char* name : {"kernel_shape", "strides", "dilations", "pads"}) {
        const onnx::AttributeProto* a = ctx.getAttribute(name);
        const int want = std::string_view(name) == "pads" ? 2 * spatial : spatial;
        if (a && a->ints_size() != want) return;
        // Its divisions and loops need positive windows, strides and dilations, and pads >= 0.
        if (a)
          for (int64_t v : a->ints())
            if (v < (want == spatial ? 1 : 0) || v > (int64_t{1} << 31)) return;
      }
      fn(ctx);
    });
    return wrapped_.emplace(s, std::move(copy)).first->second.get();
  }

 private:
  // The leading inputs the operator's shape function reads unchecked.
  static size_t required_typed_inputs(const std::string& op, const std::string& domain) {
    if (!domain.empty() && domain != "ai.onnx") return 0;
    if (op == "Conv" || op == "ConvTranspose" || op == "ConvInteger") return 2;
    if (op == "QLinearConv") return 4;
    if (op == "MaxPool" || op == "AveragePool" || op == "LpPool" || op == "MaxRoiPool") return 1;
    return 0;
  }
  // The input whose length is the output's rank (a shape tensor), or -1.
  static int shape_tensor_input(const std::string& op, const std::string& domain) {
    if (!domain.empty() && domain != "ai.onnx") return -1;
    if (op == "ConstantOfShape") return 0;
    if (op == "Expand" || op == "Reshape") return 1;
    return -1;
  }
  static constexpr int64_t kMaxRank = 64;  // far beyond any runtime's (ExecuTorch's Vulkan backend: 8)
  mutable std::map<const onnx::OpSchema*, std::unique_ptr<onnx::OpSchema>> wrapped_;
};

using ValueInfos = google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>;

/// The graph input `name` (initializers do not count), or null.
onnx::ValueInfoProto* find_graph_input(onnx::GraphProto& graph, const std::string& name) {
  for (const auto& init : graph.initializer())
    if (init.name() == name) return nullptr;
  for (auto& input : *graph.mutable_input())
    if (input.name() == name) return &input;
  return nullptr;
}

/// "a, b": the graph inputs that are not initializers.
std::string graph_input_names(onnx::GraphProto& graph) {
  std::string names;
  for (const auto& input : graph.input())
    if (find_graph_input(graph, input.name())) names += (names.empty() ? "" : ", ") + input.name();
  return names;
}

/// Sets the dims of `input` to `dims`, recording in `fixed` the size each symbolic dim now has.
void fix_input(onnx::ValueInfoProto& input, const std::vector<int64_t>& dims, std::map<std::string, int64_t>& fixed) {
  const std::string& name = input.name();
  if (!input.type().has_tensor_type())
    throw ImportError(fmt::format("--input-shape '{}': the input is not a tensor", name));
  const bool rank_known = input.type().tensor_type().has_shape();
  auto* shape = input.mutable_type()->mutable_tensor_type()->mutable_shape();
  if (!rank_known)
    for (size_t i = 0; i < dims.size(); ++i) shape->add_dim();
  if (static_cast<size_t>(shape->dim_size()) != dims.size())
    throw ImportError(fmt::format("--input-shape '{}': {} dims given, but the input has rank {}", name, dims.size(),
                                  shape->dim_size()));
  for (int i = 0; i < shape->dim_size(); ++i) {
    auto* dim = shape->mutable_dim(i);
    const int64_t size = dims[i];
    if (size < 0) throw ImportError(fmt::format("--input-shape '{}': dim {} is negative", name, i));
    if (dim->has_dim_value() && dim->dim_value() != size)
      throw ImportError(
          fmt::format("--input-shape '{}': dim {} is {} in the model, not {}", name, i, dim->dim_value(), size));
    if (dim->has_dim_param() && !dim->dim_param().empty()) {
      auto [it, inserted] = fixed.emplace(dim->dim_param(), size);
      if (!inserted && it->second != size)
        throw ImportError(
            fmt::format("--input-shape: symbol '{}' is fixed to both {} and {}", it->first, it->second, size));
    }
    dim->set_dim_value(size);
  }
}

void substitute_symbols(ValueInfos& infos, const std::map<std::string, int64_t>& fixed) {
  for (auto& info : infos) {
    if (!info.type().has_tensor_type() || !info.type().tensor_type().has_shape()) continue;
    for (auto& dim : *info.mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim()) {
      if (!dim.has_dim_param()) continue;
      auto it = fixed.find(dim.dim_param());
      if (it != fixed.end()) dim.set_dim_value(it->second);
      // A dim written as arithmetic over fixed dims ("past_sequence_length + sequence_length").
      else if (auto v = eval_dim_expression(dim.dim_param(), fixed); v && *v >= 0) dim.set_dim_value(*v);
    }
  }
}

}  // namespace

void fix_kv_cache_dims(const onnx::ModelProto& model, int64_t max_seq_len, std::map<std::string, int64_t>& dims) {
  const onnx::GraphProto& graph = model.graph();
  // S, the tokens per call: dim 1 of the integer [1, S] inputs (token and position ids) where they
  // agree (a symbolic one as --dim set it); the past is fixed to N - S so the presents hold N.
  std::set<int64_t> seqs;
  for (const auto& in : graph.input()) {
    if (!in.type().has_tensor_type() || !in.type().tensor_type().has_shape()) continue;
    const int elem = in.type().tensor_type().elem_type();
    const auto& shape = in.type().tensor_type().shape();
    if ((elem != onnx::TensorProto::INT64 && elem != onnx::TensorProto::INT32) || shape.dim_size() != 2) continue;
    const auto& d = shape.dim(1);
    if (d.has_dim_value()) seqs.insert(d.dim_value());
    else if (auto it = dims.find(d.dim_param()); d.has_dim_param() && it != dims.end()) seqs.insert(it->second);
  }
  const int64_t seq = seqs.size() == 1 && *seqs.begin() >= 1 && *seqs.begin() < max_seq_len ? *seqs.begin() : 1;
  std::set<std::string> outputs;
  for (const auto& o : graph.output()) outputs.insert(o.name());
  // The nodes that may write a present: the graph's, and those of the branches of an If whose
  // outputs are graph outputs (a merged decoder: If(use_cache_branch) over the steps with and
  // without caches), a branch's j-th output standing for the If's.
  std::vector<const onnx::NodeProto*> nodes;
  for (const auto& n : graph.node()) {
    nodes.push_back(&n);
    if (n.op_type() != "If") continue;
    for (const auto& a : n.attribute()) {
      if (!a.has_g()) continue;
      for (const auto& b : a.g().node()) nodes.push_back(&b);
      for (int j = 0; j < a.g().output_size() && j < n.output_size(); ++j)
        if (outputs.count(n.output(j))) outputs.insert(a.g().output(j).name());
    }
  }
  // What a one-input Concat or an Identity passes through (the legacy exporter wraps inputs so).
  std::map<std::string, std::string> passes_through;
  for (const onnx::NodeProto* p : nodes)
    if (const auto& n = *p; ((n.op_type() == "Identity" || n.op_type() == "Concat") && n.input_size() == 1 && n.output_size() == 1) ||
        (n.op_type() == "Slice" && n.input_size() > 0 && n.output_size() == 1))  // a sliding-window layer's past
      passes_through[n.output(0)] = n.input(0);
  auto source = [&](std::string name) {
    for (int hops = 0; hops < 8 && passes_through.count(name); ++hops) name = passes_through.at(name);
    return name;
  };
  // A present may reach its graph output through a Slice (a sliding-window layer's cache).
  for (const onnx::NodeProto* p : nodes)
    if (const auto& n = *p; n.op_type() == "Slice" && n.input_size() > 0 && n.output_size() == 1 && outputs.count(n.output(0)))
      outputs.insert(n.input(0));
  // A past input extended on `axis` into a present: its length is N - S.
  auto fix_past = [&](const std::string& past, int64_t axis, int batch_axis = 0) {
    for (const auto& in : graph.input()) {
      if (in.name() != source(past) || !in.type().has_tensor_type() || !in.type().tensor_type().has_shape()) continue;
      const auto& shape = in.type().tensor_type().shape();
      const int rank = shape.dim_size();
      const int64_t a = axis < 0 ? axis + rank : axis;
      if (a < 0 || a >= rank) continue;
      const auto& dim = shape.dim(static_cast<int>(a));
      if (dim.has_dim_param() && !dim.dim_param().empty()) dims.emplace(dim.dim_param(), max_seq_len - seq);
      // A static past (an export without dynamic axes) fixes the cache: its constants (the mask,
      // the positions) were computed for that length.
      if (dim.has_dim_value() && dim.dim_value() != max_seq_len - seq)
        throw ImportError(fmt::format(
            "--max-seq-len {}: past input '{}' has a static length of {} (the graph was exported for {} positions "
            "with {} token(s) per call): compile with --max-seq-len {}, or export the past's length as a dynamic axis",
            max_seq_len, in.name(), dim.dim_value(), dim.dim_value() + seq, seq, dim.dim_value() + seq));
      // The program holds one sequence: a symbolic batch (optimum's batch_size) is 1.
      if (const auto& b = shape.dim(batch_axis); a != batch_axis && b.has_dim_param() && !b.dim_param().empty())
        dims.emplace(b.dim_param(), 1);
    }
  };
  for (const onnx::NodeProto* p : nodes) {
    const auto& n = *p;
    if (n.op_type() == "Concat" && n.input_size() == 2 && n.output_size() == 1 && outputs.count(n.output(0))) {
      int64_t axis = 0;
      for (const auto& a : n.attribute())
        if (a.name() == "axis") axis = a.i();
      fix_past(n.input(0), axis);
    }
    // onnxruntime's GroupQueryAttention writes present_key / present_value (outputs 1, 2) from
    // past_key / past_value (inputs 3, 4) [B, Hkv, P, D].
    if (n.op_type() == "GroupQueryAttention" && n.domain() == "com.microsoft")
      for (int k = 1; k <= 2; ++k)
        if (n.output_size() > k && outputs.count(n.output(k)) && n.input_size() > k + 2 && !n.input(k + 2).empty())
          fix_past(n.input(k + 2), 2);
    // Its MultiHeadAttention: past_key / past_value (inputs 6, 7) [B, H, P, D] to outputs 1, 2.
    if (n.op_type() == "MultiHeadAttention" && n.domain() == "com.microsoft")
      for (int k = 1; k <= 2; ++k)
        if (n.output_size() > k && outputs.count(n.output(k)) && n.input_size() > k + 5 && !n.input(k + 5).empty())
          fix_past(n.input(k + 5), 2);
    // Its Attention (GPT-2 as the transformer optimizer writes it): past (input 4) [2, B, H, P, D],
    // keys and values in one tensor, to present (output 1).
    if (n.op_type() == "Attention" && n.domain() == "com.microsoft" && n.output_size() > 1 && outputs.count(n.output(1)) &&
        n.input_size() > 4 && !n.input(4).empty())
      fix_past(n.input(4), 3, 1);
  }
  // An attention mask covers the past and the new positions: N. Its length is either a sum of the
  // dims just fixed (optimum's "past_sequence_length + sequence_length", evaluated later) or, as
  // the dynamo exporter writes it, a symbol of its own: an integer or bool [1, L] input whose L
  // is neither fixed nor a sum of fixed dims, once S is known from the tokens.
  if (seqs.size() != 1) return;
  for (const auto& in : graph.input()) {
    if (!in.type().has_tensor_type() || !in.type().tensor_type().has_shape()) continue;
    const int elem = in.type().tensor_type().elem_type();
    const auto& shape = in.type().tensor_type().shape();
    const bool int_or_bool = elem == onnx::TensorProto::INT64 || elem == onnx::TensorProto::INT32 ||
                             elem == onnx::TensorProto::BOOL;
    if (!int_or_bool || shape.dim_size() != 2 || !shape.dim(1).has_dim_param()) continue;
    const std::string& sym = shape.dim(1).dim_param();
    if (sym.empty() || dims.count(sym) || eval_dim_expression(sym, dims)) continue;
    dims.emplace(sym, max_seq_len);
  }
}

void apply_input_shapes(onnx::ModelProto& model, const std::map<std::string, std::vector<int64_t>>& input_shapes,
                        const std::map<std::string, int64_t>& dims, std::set<std::string>* unmatched) {
  onnx::GraphProto& graph = *model.mutable_graph();
  std::map<std::string, int64_t> fixed = dims;  // symbol -> size
  std::set<std::string> symbols;                // the symbolic dims of the graph inputs
  for (const auto& input : graph.input())
    if (input.type().has_tensor_type() && input.type().tensor_type().has_shape())
      for (const auto& d : input.type().tensor_type().shape().dim())
        if (d.has_dim_param() && !d.dim_param().empty()) {
          symbols.insert(d.dim_param());
          symbols.merge(dim_expression_symbols(d.dim_param()));  // "past + seq" names past and seq
        }
  for (const auto& [name, size] : dims) {
    if (size < 0) throw ImportError(fmt::format("--dim {}={}: a size cannot be negative", name, size));
    if (!symbols.count(name) && unmatched) unmatched->insert(name);
    else if (!symbols.count(name))
      throw ImportError(fmt::format("--dim {}: no graph input has a dim named '{}' (symbolic dims: {})", name, name,
                                    symbols.empty() ? std::string("none") : fmt::format("{}", fmt::join(symbols, ", "))));
  }
  for (const auto& [name, dims] : input_shapes) {
    onnx::ValueInfoProto* input = find_graph_input(graph, name);
    if (!input)
      throw ImportError(fmt::format("--input-shape '{}': the graph has no input of that name (inputs: {})", name,
                                    graph_input_names(graph)));
    fix_input(*input, dims, fixed);
  }
  substitute_symbols(*graph.mutable_input(), fixed);
  substitute_symbols(*graph.mutable_output(), fixed);
  substitute_symbols(*graph.mutable_value_info(), fixed);
}

void inline_external_shape_data(onnx::GraphProto& graph, const std::vector<ir::TensorAttr>& initializers) {
  for (int i = 0; i < graph.initializer_size(); ++i) {
    onnx::TensorProto& t = *graph.mutable_initializer(i);
    const bool shape_like = t.dims_size() <= 1 && (t.data_type() == onnx::TensorProto_DataType_INT64 ||
                                                   t.data_type() == onnx::TensorProto_DataType_INT32);
    if (!shape_like || t.data_location() != onnx::TensorProto_DataLocation_EXTERNAL) continue;
    const ir::TensorData& data = initializers[i].data;
    t.set_raw_data(data.data(), data.size());
    t.clear_external_data();
    t.clear_data_location();
  }
}

void infer_shapes(onnx::ModelProto& model, const std::vector<std::string>& node_names) {
  for (int i = 0; i < model.graph().node_size(); ++i) model.mutable_graph()->mutable_node(i)->set_name(node_names[i]);
  // Lenient: node-level inference errors leave those outputs as the file declared them
  // (error_mode 0), and schema type constraints are not enforced (check_type off): exporters
  // write e.g. int64 Constants at opset 6, whose schema allows only floats. No data propagation: libonnx 1.12's
  // propagation through Gather reads out of bounds on an out-of-range index (found by fuzzing), and
  // vkc's own folding to a fixpoint (fold-constants) computes those shape subgraphs anyway.
  // A declared shape that contradicts the inferred one is the exporter's mistake (torch's dynamo
  // exporter declares an LSTM's Y_h rank 4): onnxruntime computes the operator's shape and ignores
  // the declaration. So does vkc: on a contradiction, the shapes declared for graph outputs and
  // value_info are dropped and inference runs again; the inputs' shapes stay authoritative.
  const onnx::ShapeInferenceOptions options(/*check_type_val=*/false, /*strict_mode_val=*/0, /*data_prop_val=*/false);
  const GuardedSchemas schemas;
  try {
    onnx::shape_inference::InferShapes(model, &schemas, options);
    return;
  } catch (const std::exception& e) {
    if (std::string_view(e.what()).find("existing shape") == std::string_view::npos)
      throw ImportError("shape inference failed: " + first_line(e.what()));
  }
  onnx::GraphProto& graph = *model.mutable_graph();
  graph.clear_value_info();
  for (auto& out : *graph.mutable_output())
    if (out.type().has_tensor_type()) out.mutable_type()->mutable_tensor_type()->clear_shape();
  try {
    onnx::shape_inference::InferShapes(model, &schemas, options);
  } catch (const std::exception& e) {
    throw ImportError("shape inference failed: " + first_line(e.what()));
  }
}

}  // namespace vkc::compiler::detail
