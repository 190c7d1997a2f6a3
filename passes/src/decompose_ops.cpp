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
// Only floating-point tensors with known types are rewritten; anything else stays and is reported.
#include <cstring>
#include <functional>
#include <map>

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
    auto it = rules().find(n->op_type());
    if (it == rules().end() || !n->output(0)->type().known() || !n->input(0)->type().known() ||
        !ir::is_float(n->input(0)->dtype()) || !n->input(0)->shape().is_static())
      continue;
    Rewriter r(g, n);
    it->second(r);
  }
}

}  // namespace vkc::passes
