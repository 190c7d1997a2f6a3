// decompose-ops: ONNX operators with no runtime operator of their own, rewritten as the standard
// operators they are defined by (the ONNX spec's function bodies), which lowering then handles:
//   CastLike(x, t)          -> Cast(x, to = t's dtype)
//   Selu(x)                 -> gamma * (Relu(x) + alpha * (Exp(Min(x, 0)) - 1))
//   Celu(x)                 -> Relu(x) + Min(alpha * (Exp(x / alpha) - 1), 0)
//   Softplus(x)             -> Log(Exp(x) + 1)
//   Softsign(x)             -> x / (Abs(x) + 1)
//   ThresholdedRelu(x)      -> x * (x > alpha)
//   ReduceSumSquare(x)      -> ReduceSum(x * x)
//   ReduceL1(x), ReduceL2(x)-> ReduceSum(Abs(x)), Sqrt(ReduceSum(x * x))
//   ReduceLogSum(x)         -> Log(ReduceSum(x))
//   ReduceLogSumExp(x)      -> m + Log(ReduceSum(Exp(x - m))), m = ReduceMax(x) (stable)
//   Max / Min(a, b, c, ...)  -> Max / Min(Max / Min(a, b), c) ...
//   Mean(a, b, ...)         -> Sum(a, b, ...) / count
//   Hardmax(x, axis)        -> Cast(Equal(0..n-1 along axis, ArgMax(x, axis)))
//   CumSum(x, axis)         -> MatMul(x along the last axis, constant 0/1 triangle)
//   Trilu(x, k)             -> Where(j - i >= k (upper) or <= k (lower), x, 0)   (static x)
//   GatherND(x, indices)    -> Gather(Reshape(x, [rows, rest...]), flat row of each index)
//                              (batch_dims 0, static x; dynamo's mask lookups, CLIP's pooling)
//   LayerNormalization's Mean / InvStdDev outputs, where used -> ReduceMean / Sqrt / Reciprocal
// Only floating-point tensors with known types are rewritten; anything else stays and is reported.
#include <algorithm>
#include <functional>
#include <map>
#include <optional>

#include "constants.h"
#include "vkc/passes/passes.h"

namespace vkc::passes {
namespace {

class Rewriter {
 public:
  Rewriter(ir::Graph& g, ir::Node* n) : g_(g), n_(n), t_(n->output(0)->type()) {}

  ir::Value* x() const { return n_->input(0); }
  const ir::TensorType& type() const { return t_; }
  ir::Value* c(double v) { return add_f32_constant(g_, g_.unique_name(n_->name() + "_c"), {}, {static_cast<float>(v)}); }
  ir::Value* op(const char* type, std::vector<ir::Value*> ins, ir::AttributeMap attrs = {}) {
    return op_typed(type, std::move(ins), t_, std::move(attrs));
  }
  ir::Value* op_typed(const char* type, std::vector<ir::Value*> ins, const ir::TensorType& t, ir::AttributeMap attrs = {}) {
    ir::Node* m = g_.add_node(ir::kOnnxDomain, type, std::move(ins), {t}, g_.unique_name(n_->name() + "_" + type), n_);
    m->attrs() = std::move(attrs);
    m->set_opset(n_->opset());
    return m->output(0);
  }
  // A reduction like n's (its axes attribute or input, keepdims, noop_with_empty_axes) over `v`;
  // keepdims >= 0 overrides n's.
  ir::Value* reduce(const char* type, ir::Value* v, const ir::TensorType& t, int64_t keepdims = -1) {
    std::vector<ir::Value*> ins = {v};
    if (n_->num_inputs() > 1 && n_->input(1)) ins.push_back(n_->input(1));
    ir::AttributeMap attrs;
    for (const char* k : {"axes", "keepdims", "noop_with_empty_axes"})
      if (const ir::Attribute* a = n_->attr(k)) attrs[k] = *a;
    if (keepdims >= 0) attrs["keepdims"] = keepdims;
    return op_typed(type, std::move(ins), t, std::move(attrs));
  }
  // The input's type with the reduced axes kept as 1 (for keepdims=1 reductions).
  ir::TensorType kept_type() const {
    ir::TensorType t = in_type();
    std::vector<int64_t> dims = t.shape.sizes();
    std::vector<int64_t> axes;
    if (n_->has_attr("axes")) axes = n_->attr_ints("axes");
    else if (n_->num_inputs() > 1 && n_->input(1)) axes = constant_ints(n_->input(1)).value_or(std::vector<int64_t>{});
    if (axes.empty() && !n_->attr_int("noop_with_empty_axes", 0))
      for (size_t d = 0; d < dims.size(); ++d) axes.push_back(static_cast<int64_t>(d));
    for (int64_t a : axes) dims.at(a < 0 ? a + static_cast<int64_t>(dims.size()) : a) = 1;
    t.shape = ir::Shape::of(dims);
    return t;
  }
  // The input's type (for element-wise steps before a reduction).
  ir::TensorType in_type() const { return x()->type(); }
  void done(ir::Value* result) {
    g_.replace_all_uses(n_->output(0), result);
    g_.remove_node(n_);
  }
  double attr(const char* k, double dflt) const { return n_->attr_float(k, dflt); }

 private:
  ir::Graph& g_;
  ir::Node* n_;
  ir::TensorType t_;
};

using Rule = std::function<void(Rewriter&)>;

const std::map<std::string, Rule, std::less<>>& rules() {
  static const std::map<std::string, Rule, std::less<>> kRules = {
      {"Selu",
       [](Rewriter& r) {
         const double alpha = r.attr("alpha", 1.67326319217681884765625), gamma = r.attr("gamma", 1.05070102214813232421875);
         ir::Value* neg = r.op("Sub", {r.op("Exp", {r.op("Min", {r.x(), r.c(0)})}), r.c(1)});
         r.done(r.op("Mul", {r.op("Add", {r.op("Relu", {r.x()}), r.op("Mul", {neg, r.c(alpha)})}), r.c(gamma)}));
       }},
      {"Celu",
       [](Rewriter& r) {
         const double alpha = r.attr("alpha", 1.0);
         ir::Value* e = r.op("Sub", {r.op("Exp", {r.op("Div", {r.x(), r.c(alpha)})}), r.c(1)});
         r.done(r.op("Add", {r.op("Relu", {r.x()}), r.op("Min", {r.op("Mul", {e, r.c(alpha)}), r.c(0)})}));
       }},
      {"Softplus", [](Rewriter& r) { r.done(r.op("Log", {r.op("Add", {r.op("Exp", {r.x()}), r.c(1)})})); }},
      {"Softsign", [](Rewriter& r) { r.done(r.op("Div", {r.x(), r.op("Add", {r.op("Abs", {r.x()}), r.c(1)})})); }},
      {"ThresholdedRelu",
       [](Rewriter& r) {
         ir::TensorType b = r.type();
         b.dtype = ir::DType::Bool;
         ir::Value* keep = r.op_typed("Greater", {r.x(), r.c(r.attr("alpha", 1.0))}, b);
         r.done(r.op("Where", {keep, r.x(), r.c(0)}));
       }},
      {"ReduceSumSquare",
       [](Rewriter& r) { r.done(r.reduce("ReduceSum", r.op_typed("Mul", {r.x(), r.x()}, r.in_type()), r.type())); }},
      {"ReduceL1",
       [](Rewriter& r) { r.done(r.reduce("ReduceSum", r.op_typed("Abs", {r.x()}, r.in_type()), r.type())); }},
      {"ReduceL2",
       [](Rewriter& r) {
         r.done(r.op("Sqrt", {r.reduce("ReduceSum", r.op_typed("Mul", {r.x(), r.x()}, r.in_type()), r.type())}));
       }},
      {"ReduceLogSum", [](Rewriter& r) { r.done(r.op("Log", {r.reduce("ReduceSum", r.x(), r.type())})); }},
      {"ReduceLogSumExp",
       [](Rewriter& r) {
         // Stable: log(sum(exp(x - m))) + m with m = max(x) (kept dims to subtract, n's own for the sum).
         ir::Value* m_kept = r.reduce("ReduceMax", r.x(), r.kept_type(), 1);
         ir::Value* e = r.op_typed("Exp", {r.op_typed("Sub", {r.x(), m_kept}, r.in_type())}, r.in_type());
         r.done(r.op("Add", {r.op("Log", {r.reduce("ReduceSum", e, r.type())}), r.reduce("ReduceMax", r.x(), r.type())}));
       }},
  };
  return kRules;
}

// LayerNormalization's optional Mean and InvStdDev outputs (the runtime's layer norm computes only
// Y), where something reads them, as ReduceMean(x) and 1 / Sqrt(ReduceMean((x - mean)^2) + eps)
// over the normalized axes, kept as 1 (the shapes ONNX gives them).
void layer_norm_statistics(ir::Graph& g, ir::Node* n) {
  auto used = [&](size_t i) {
    return i < n->outputs().size() && n->output(i) && (!g.users(n->output(i)).empty() || g.is_output(n->output(i)));
  };
  if ((!used(1) && !used(2)) || !n->input(0)->type().known() || !ir::is_float(n->input(0)->dtype()) ||
      !n->input(0)->shape().is_static())
    return;
  const ir::Value* x = n->input(0);
  const auto r = static_cast<int64_t>(x->shape().rank());
  int64_t axis = n->attr_int("axis", -1);
  if (axis < 0) axis += r;
  if (axis < 0 || axis >= r) return;
  std::vector<int64_t> axes, kept = x->shape().sizes();
  for (int64_t d = axis; d < r; ++d) axes.push_back(d), kept[d] = 1;
  const ir::TensorType stat{x->dtype(), ir::Shape::of(kept)};
  auto add = [&](const char* op, std::vector<ir::Value*> ins, const ir::TensorType& t, ir::AttributeMap attrs = {}) {
    return add_onnx_node(g, n, op, std::move(ins), t, std::move(attrs));
  };
  ir::Value* mean = add("ReduceMean", {n->input(0)}, stat, {{"axes", axes}, {"keepdims", int64_t{1}}});
  ir::Value* centered = add("Sub", {n->input(0), mean}, x->type());
  ir::Value* var = add("ReduceMean", {add("Mul", {centered, centered}, x->type())}, stat,
                       {{"axes", axes}, {"keepdims", int64_t{1}}});
  ir::Value* eps = add_f32_constant(g, g.unique_name(n->name() + "_eps"), {},
                                    {static_cast<float>(n->attr_float("epsilon", 1e-5))});
  ir::Value* inv = add("Reciprocal", {add("Sqrt", {add("Add", {var, eps}, stat)}, stat)}, stat);
  if (used(1)) g.replace_all_uses(n->output(1), mean);
  if (used(2)) g.replace_all_uses(n->output(2), inv);
}

// Max / Min of more than two inputs as a chain of two-input ones (each step typed as the output:
// broadcasting into the final shape early gives the same values).
void pairwise(ir::Graph& g, ir::Node* n) {
  if (n->num_inputs() <= 2 || !n->output(0)->type().known()) return;
  std::vector<ir::Value*> ins(n->inputs().begin(), n->inputs().end());
  if (std::find(ins.begin(), ins.end(), nullptr) != ins.end()) return;
  const std::string op = n->op_type();
  ir::Value* acc = ins[0];
  for (size_t i = 1; i + 1 < ins.size(); ++i)
    acc = add_onnx_node(g, n, op.c_str(), {acc, ins[i]}, n->output(0)->type());
  n->morph(ir::kOnnxDomain, op, {acc, ins.back()}, {});
}

// Mean(a, b, ...) of floats -> Sum(a, b, ...) / count.
void mean_as_sum(ir::Graph& g, ir::Node* n) {
  if (!n->output(0)->type().known() || !ir::is_float(n->output(0)->dtype())) return;
  const auto count = static_cast<float>(n->num_inputs());
  ir::Value* sum = add_onnx_node(g, n, "Sum", std::vector<ir::Value*>(n->inputs().begin(), n->inputs().end()),
                                 n->output(0)->type());
  n->morph(ir::kOnnxDomain, "Div", {sum, add_f32_constant(g, n->name() + "_count", {}, {count})}, {});
}

// CumSum(x, axis) of a static float x and a constant axis (at most 2048 long) -> x moved to the
// last axis, MatMul by a constant 0/1 triangular matrix (exclusive: strict; reverse: the other
// triangle), moved back. M[k][j] = 1 where input k adds into output j.
void cumsum_as_matmul(ir::Graph& g, ir::Node* n) {
  const ir::Value* x = n->input(0);
  if (!x->type().known() || !ir::is_float(x->dtype()) || !x->shape().is_static() || x->shape().rank() == 0 ||
      n->num_inputs() < 2 || !n->input(1))
    return;
  const auto axis_v = constant_ints(n->input(1));
  if (!axis_v || axis_v->size() != 1) return;
  const auto rank = static_cast<int64_t>(x->shape().rank());
  int64_t axis = (*axis_v)[0];
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return;
  const auto dims = x->shape().sizes();
  const int64_t len = dims[static_cast<size_t>(axis)];
  if (len == 0 || len > 2048) return;
  const bool exclusive = n->attr_int("exclusive", 0) != 0, reverse = n->attr_int("reverse", 0) != 0;
  std::vector<float> m(static_cast<size_t>(len * len), 0.0f);
  for (int64_t k = 0; k < len; ++k)
    for (int64_t j = 0; j < len; ++j) {
      const bool adds = reverse ? (exclusive ? k > j : k >= j) : (exclusive ? k < j : k <= j);
      if (adds) m[static_cast<size_t>(k * len + j)] = 1.0f;
    }
  ir::Value* tri = add_f32_constant(g, g.unique_name(n->name() + "_triangle"), {len, len}, m);
  std::vector<int64_t> perm(static_cast<size_t>(rank));
  for (int64_t d = 0; d < rank; ++d) perm[static_cast<size_t>(d)] = d;
  std::swap(perm[static_cast<size_t>(axis)], perm.back());
  std::vector<int64_t> moved = dims;
  std::swap(moved[static_cast<size_t>(axis)], moved.back());
  const ir::TensorType moved_type{x->dtype(), ir::Shape::of(moved)};
  ir::Value* v = n->input(0);
  if (axis == rank - 1) {
    n->morph(ir::kOnnxDomain, "MatMul", {v, tri}, {});
    return;
  }
  v = add_onnx_node(g, n, "Transpose", {v}, moved_type, {{"perm", perm}});
  v = add_onnx_node(g, n, "MatMul", {v, tri}, moved_type);
  n->morph(ir::kOnnxDomain, "Transpose", {v}, {{"perm", perm}});
}

// Hardmax(x, axis) (opset 13: one axis) -> Cast(Equal(iota, ArgMax(x, axis, keepdims 1))), iota the
// constant positions 0..n-1 along the axis: 1 at the first maximum, 0 elsewhere.
void hardmax(ir::Graph& g, ir::Node* n) {
  const ir::Value* x = n->input(0);
  if (n->opset() < 13 || !x->type().known() || !ir::is_float(x->dtype()) || !x->shape().is_static() ||
      x->shape().rank() == 0)
    return;
  const auto rank = static_cast<int64_t>(x->shape().rank());
  int64_t axis = n->attr_int("axis", -1);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return;
  std::vector<int64_t> kept = x->shape().sizes(), iota_shape(static_cast<size_t>(rank), 1);
  const int64_t size = kept[static_cast<size_t>(axis)];
  kept[static_cast<size_t>(axis)] = 1;
  iota_shape[static_cast<size_t>(axis)] = size;
  std::vector<int64_t> iota(static_cast<size_t>(size));
  for (int64_t i = 0; i < size; ++i) iota[static_cast<size_t>(i)] = i;
  ir::Value* positions = add_i64_constant(g, n->name() + "_positions", iota_shape, iota);
  ir::Value* first = add_onnx_node(g, n, "ArgMax", {n->input(0)}, {ir::DType::Int64, ir::Shape::of(kept)},
                                   {{"axis", axis}, {"keepdims", int64_t{1}}});
  ir::Value* hit = add_onnx_node(g, n, "Equal", {positions, first}, {ir::DType::Bool, x->shape()});
  n->morph(ir::kOnnxDomain, "Cast", {hit}, {{"to", static_cast<int64_t>(x->dtype() == ir::DType::Float16 ? 10 : 1)}});
}

// Trilu(x, k) of a static x -> Where(keep, x, 0). keep [N, M] is a constant for a constant k
// (upper: j - i >= k, lower: j - i <= k); for a k computed at run time it is that comparison of
// the constant j - i with k. It broadcasts over the leading dims.
void trilu_as_where(ir::Graph& g, ir::Node* n) {
  const ir::Value* x = n->input(0);
  if (!x->type().known() || !x->shape().is_static() || x->shape().rank() < 2) return;
  ir::Value* k_in = n->num_inputs() > 1 ? n->input(1) : nullptr;
  std::optional<int64_t> k = int64_t{0};
  if (k_in) {
    const auto ks = constant_ints(k_in);
    k = ks && ks->size() == 1 ? std::optional<int64_t>((*ks)[0]) : std::nullopt;
    if (!k && (!k_in->type().known() || !k_in->shape().is_static() || k_in->shape().numel() != 1)) return;
  }
  const auto dims = x->shape().sizes();
  const int64_t rows = dims[dims.size() - 2], cols = dims.back();
  const bool upper = n->attr_int("upper", 1) != 0;
  const ir::Shape mask_shape = ir::Shape::of({rows, cols});
  ir::Value* keep = nullptr;
  if (k) {
    std::vector<uint8_t> mask(static_cast<size_t>(rows * cols));
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j) mask[static_cast<size_t>(i * cols + j)] = upper ? j - i >= *k : j - i <= *k;
    keep = g.add_constant(g.unique_name(n->name() + "_mask"), {ir::DType::Bool, mask_shape},
                          ir::TensorData::owned(std::move(mask)));
  } else {
    if (k_in->dtype() != ir::DType::Int64 || rows * cols == 0) return;
    std::vector<int64_t> diff(static_cast<size_t>(rows * cols));
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j) diff[static_cast<size_t>(i * cols + j)] = j - i;
    ir::Value* d = add_i64_constant(g, n->name() + "_diagonal_offset", {rows, cols}, diff);
    keep = add_onnx_node(g, n, upper ? "GreaterOrEqual" : "LessOrEqual", {d, k_in}, {ir::DType::Bool, mask_shape});
  }
  ir::Value* zero = g.add_constant(g.unique_name(n->name() + "_zero"), {x->dtype(), ir::Shape::of({})},
                                   ir::TensorData::owned(std::vector<uint8_t>(ir::dtype_size(x->dtype()))));
  n->morph(ir::kOnnxDomain, "Where", {keep, n->input(0), zero}, {});
}

// GatherND(x, idx) with idx [..., k] and batch_dims 0 over a static x: the first k dims of x are
// one dim of rows, and each index picks the row sum(idx_i * stride_i). Constant indices become
// constant rows (negative ones wrapped); indices computed at run time (CLIP's pooling at the
// argmax of the token ids) are combined by Gather/Mul/Add at run time and must be in range and
// non-negative, as PyTorch's exporters write them. Any data type.
void gather_nd_as_gather(ir::Graph& g, ir::Node* n) {
  ir::Value* x = n->input(0);
  ir::Value* idx = n->num_inputs() > 1 ? n->input(1) : nullptr;
  if (!idx || n->attr_int("batch_dims", 0) != 0 || !x->type().known() || !x->shape().is_static() ||
      !idx->type().known() || !idx->shape().is_static() || idx->shape().rank() < 1)
    return;
  const std::vector<int64_t> dims = x->shape().sizes();
  std::vector<int64_t> idx_dims = idx->shape().sizes();
  const int64_t k = idx_dims.back();
  if (k < 1 || k > static_cast<int64_t>(dims.size())) return;
  int64_t rows = 1;
  for (int64_t i = 0; i < k; ++i) rows *= dims[static_cast<size_t>(i)];
  std::vector<int64_t> table = {rows};
  table.insert(table.end(), dims.begin() + k, dims.end());
  idx_dims.pop_back();
  ir::Value* picks = nullptr;
  if (const auto values = constant_ints(idx)) {
    std::vector<int64_t> flat;
    for (size_t at = 0; at + static_cast<size_t>(k) <= values->size(); at += static_cast<size_t>(k)) {
      int64_t row = 0;
      for (int64_t i = 0; i < k; ++i) {
        const int64_t dim = dims[static_cast<size_t>(i)];
        int64_t v = (*values)[at + static_cast<size_t>(i)];
        if (v < 0) v += dim;
        if (v < 0 || v >= dim) return;  // out of range: left for the error to name
        row = row * dim + v;
      }
      flat.push_back(row);
    }
    picks = add_i64_constant(g, g.unique_name(n->name() + "_rows"), idx_dims, flat);
  } else {
    if (idx->dtype() != ir::DType::Int64) return;
    const ir::TensorType part{ir::DType::Int64, ir::Shape::of(idx_dims)};
    int64_t stride = rows;
    for (int64_t i = 0; i < k; ++i) {
      stride /= dims[static_cast<size_t>(i)];
      ir::Value* col = add_onnx_node(g, n, "Gather", {idx, add_i64_constant(g, g.unique_name(n->name() + "_col"), {}, {i})},
                                     part, {{"axis", int64_t{-1}}});
      if (stride != 1)
        col = add_onnx_node(g, n, "Mul", {col, add_i64_constant(g, g.unique_name(n->name() + "_stride"), {}, {stride})},
                            part);
      picks = picks ? add_onnx_node(g, n, "Add", {picks, col}, part) : col;
    }
  }
  ir::Value* table_shape = add_i64_constant(g, g.unique_name(n->name() + "_rows_shape"),
                                            {static_cast<int64_t>(table.size())}, table);
  ir::Value* as_rows = add_onnx_node(g, n, "Reshape", {x, table_shape}, {x->dtype(), ir::Shape::of(table)});
  n->morph(ir::kOnnxDomain, "Gather", {as_rows, picks}, {{"axis", int64_t{0}}});
  n->set_opset(std::max<int64_t>(n->opset(), 13));
}

// Rewrites that build more than one node or read more than one input (each checks its own
// conditions and leaves the node alone when they do not hold).
// Upsample before opset 9 keeps its scales in an attribute: the opset-9 form, scales as an input.
void upsample_scales_as_input(ir::Graph& g, ir::Node* n) {
  const ir::Attribute* a = n->opset() < 9 && n->num_inputs() == 1 ? n->attr("scales") : nullptr;
  const auto* values = a ? std::get_if<std::vector<double>>(a) : nullptr;
  if (!values) return;
  std::vector<float> scales(values->begin(), values->end());
  ir::Value* c = add_f32_constant(g, g.unique_name(n->name() + "_scales"), {static_cast<int64_t>(scales.size())}, scales);
  n->set_inputs({n->input(0), c});
  n->attrs().erase("scales");
  n->set_opset(9);
}

using GraphRewrite = void (*)(ir::Graph&, ir::Node*);
const std::map<std::string, GraphRewrite, std::less<>>& graph_rewrites() {
  static const std::map<std::string, GraphRewrite, std::less<>> kRewrites = {
      {"Max", pairwise},       {"Min", pairwise},  {"Mean", mean_as_sum},
      {"CumSum", cumsum_as_matmul}, {"Hardmax", hardmax}, {"Trilu", trilu_as_where},
      {"GatherND", gather_nd_as_gather},
      {"LayerNormalization", layer_norm_statistics}, {"Upsample", upsample_scales_as_input}};
  return kRewrites;
}

}  // namespace

void decompose_ops(ir::Graph& g, PassContext&) {
  for (ir::Node* n : g.nodes()) {
    if (n->domain() != ir::kOnnxDomain || n->num_inputs() == 0 || !n->input(0)) continue;
    if (n->is_onnx("CastLike")) {
      const ir::Value* like = n->num_inputs() > 1 ? n->input(1) : nullptr;
      if (!like || !like->type().known()) continue;
      // The output already has t's dtype; Cast's lowering reads it from there.
      n->morph(ir::kOnnxDomain, "Cast", {n->input(0)}, {});
      continue;
    }
    if (auto r = graph_rewrites().find(n->op_type()); r != graph_rewrites().end()) {
      r->second(g, n);
      continue;
    }
    auto it = rules().find(n->op_type());
    if (it == rules().end() || !n->output(0)->type().known() || !n->input(0)->type().known() ||
        !ir::is_float(n->input(0)->dtype()) || !n->input(0)->shape().is_static())
      continue;
    Rewriter r(g, n);
    it->second(r);
  }
}

}  // namespace vkc::passes
