// lower-dynamic-quant: onnxruntime's dynamic quantization (quantize_dynamic) as it writes it,
//   DynamicQuantizeLinear(x) -> (xq uint8, xs, xzp)
//   MatMulInteger(xq, Wq, xzp [, Wzp]) or ConvInteger(xq, Wq, xzp [, Wzp]) -> int32
//   Cast(to float) -> Mul(., Mul(xs, Ws))
// becomes the same numbers in operators the runtime has: x fake-quantized with its own range
// (min/max over the whole tensor, uint8, as DynamicQuantizeLinear defines), times the weights as
// DequantizeLinear(Wq, Ws, Wzp), which lower-qdq then keeps int8 (MatMul, symmetric int8) or
// dequantizes exactly. With int32 accumulation replaced by f32, results agree to rounding.
// Chains of other shapes stay in ONNX form and are reported.
#include <fmt/format.h>

#include <limits>
#include <map>

#include "constants.h"
#include "pattern_utils.h"
#include "vkc/passes/passes.h"

namespace vkc::passes {
namespace {

class Rewriter {
 public:
  explicit Rewriter(ir::Graph& g) : g_(g) {}

  // MatMulInteger / ConvInteger `mi` reading output 0 of DynamicQuantizeLinear `dq`.
  bool rewrite(ir::Node* dq, ir::Node* mi) {
    const bool conv = mi->is_onnx("ConvInteger");
    ir::Value* wq = mi->input(1);
    ir::Value* wzp = mi->num_inputs() > 3 ? mi->input(3) : nullptr;
    if (mi->input(0) != dq->output(0) || (mi->num_inputs() > 2 && mi->input(2) && mi->input(2) != dq->output(2)) ||
        !wq->is_constant() || (wzp && !wzp->is_constant()))
      return false;
    ir::Node* cast = sole_user(g_, mi->output(0), "Cast");
    if (!cast || cast->attr_int("to", 0) != 1) return false;
    ir::Node* mul = sole_user(g_, cast->output(0), "Mul");
    if (!mul) return false;
    const ir::Value* combined = other_operand(mul, cast->output(0));
    ir::Node* scales = combined ? combined->producer() : nullptr;
    if (!scales || !scales->is_onnx("Mul")) return false;
    ir::Value* ws = other_operand(scales, dq->output(1));
    if (!ws || !ws->is_constant() || !ws->shape().is_static()) return false;
    const int64_t n_out = wq->shape().sizes()[conv ? 0 : wq->shape().rank() - 1];
    const bool per_tensor = ws->shape().numel() == 1;
    if (!per_tensor && (conv || ws->shape().rank() != 1 || ws->shape().numel() != n_out)) return false;
    if (wzp && wzp->shape().numel() != 1 && wzp->shape().numel() != n_out) return false;
    // The weights as a DequantizeLinear lower-qdq knows (per output channel: axis 1 of [K, N], 0 of a conv's).
    std::vector<ir::Value*> dq_ins = {wq, per_tensor ? scalar_of(ws) : ws};
    if (wzp) dq_ins.push_back(wzp->shape().numel() == 1 && !per_tensor ? broadcast_zp(wzp, n_out) : wzp);
    if (wzp && per_tensor && wzp->shape().numel() != 1) return false;
    ir::Node* wdq = add(mi, "DequantizeLinear", dq_ins, {ir::DType::Float32, wq->shape()});
    wdq->set_attr("axis", int64_t{conv ? 0 : 1});
    ir::Node* op = add(mi, conv ? "Conv" : "MatMul", {fake_quant(dq, mi), wdq->output(0)}, mul->output(0)->type());
    if (conv)
      for (const char* a : {"auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"})
        if (const ir::Attribute* v = mi->attr(a)) op->set_attr(a, *v);
    g_.replace_all_uses(mul->output(0), op->output(0));
    for (ir::Node* n : {mul, cast, mi}) g_.remove_node(n);
    return true;
  }

 private:
  ir::Node* add(const ir::Node* at, const char* op, std::vector<ir::Value*> ins, ir::TensorType t) {
    ir::Node* n = g_.add_node(ir::kOnnxDomain, op, std::move(ins), {std::move(t)},
                              g_.unique_name(at->name() + "_" + op), at);
    n->set_opset(13);
    return n;
  }
  ir::Value* c(double v) { return add_f32_constant(g_, g_.unique_name("dynq_c"), {}, {static_cast<float>(v)}); }
  ir::Value* scalar_of(ir::Value* v) {
    return v->shape().rank() == 0 ? v : add_f32_constant(g_, g_.unique_name(v->name()), {}, *constant_floats(v));
  }
  ir::Value* broadcast_zp(ir::Value* zp, int64_t n) {
    std::vector<uint8_t> bytes(static_cast<size_t>(n), zp->data().data()[0]);
    return g_.add_constant(g_.unique_name(zp->name() + "_n"), {zp->dtype(), ir::Shape::of({n})},
                           ir::TensorData::owned(std::move(bytes)));
  }

  // x fake-quantized as DynamicQuantizeLinear defines it (uint8, range including 0), once per dq:
  //   scale = (max(x, 0) - min(x, 0)) / 255, zp = clip(round(-min(x, 0) / scale), 0, 255),
  //   x' = (clip(round(x / scale) + zp, 0, 255) - zp) * scale.
  ir::Value* fake_quant(ir::Node* dq, const ir::Node* at) {
    if (auto it = done_.find(dq); it != done_.end()) return it->second;
    ir::Value* x = dq->input(0);
    const ir::TensorType t = x->type();
    const ir::TensorType s{ir::DType::Float32, ir::Shape::of(std::vector<int64_t>(t.shape.rank(), 1))};
    auto un = [&](const char* op, ir::Value* a, const ir::TensorType& ty) { return add(at, op, {a}, ty)->output(0); };
    auto bin = [&](const char* op, ir::Value* a, ir::Value* b, const ir::TensorType& ty) {
      return add(at, op, {a, b}, ty)->output(0);
    };
    auto clip = [&](ir::Value* a, double lo, double hi, const ir::TensorType& ty) {
      return add(at, "Clip", {a, c(lo), c(hi)}, ty)->output(0);
    };
    ir::Value* lo = bin("Min", un("ReduceMin", x, s), c(0.0), s);
    ir::Value* hi = bin("Max", un("ReduceMax", x, s), c(0.0), s);
    // A tensor of zeros has range 0: any positive scale then gives the zeros back.
    ir::Value* scale = bin("Max", bin("Div", bin("Sub", hi, lo, s), c(255.0), s),
                           c(std::numeric_limits<float>::min()), s);
    ir::Value* zp = clip(un("Round", bin("Div", un("Neg", lo, s), scale, s), s), 0, 255, s);
    ir::Value* q = clip(bin("Add", un("Round", bin("Div", x, scale, t), t), zp, t), 0, 255, t);
    return done_[dq] = bin("Mul", bin("Sub", q, zp, t), scale, t);
  }

  ir::Graph& g_;
  std::map<ir::Node*, ir::Value*> done_;
};

}  // namespace

void lower_dynamic_quant(ir::Graph& g, PassContext&) {
  Rewriter rw(g);
  for (ir::Node* n : g.nodes()) {
    if (!n->is_onnx("DynamicQuantizeLinear") || n->input(0)->dtype() != ir::DType::Float32 ||
        !n->input(0)->shape().is_static())
      continue;
    for (ir::Node* u : g.users(n->output(0)))
      if (u->is_onnx("MatMulInteger") || u->is_onnx("ConvInteger")) rw.rewrite(n, u);
  }
}

}  // namespace vkc::passes
