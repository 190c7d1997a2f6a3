// expand-qlinear-ops: onnxruntime's QOperator format (quantize_static with QuantFormat.QOperator)
// computes in quantized tensors between ops. Each QLinear operator is rewritten as what it means,
//   QLinearConv(x, xs, xz, w, ws, wz, ys, yz [, B])  -> Q(Conv(DQ(x), DQ(w) [, DQ(B, xs * ws)]), ys, yz)
//   QLinearMatMul(a, as, az, b, bs, bz, ys, yz)      -> Q(MatMul(DQ(a), DQ(b)), ys, yz)
// so that lower-qdq sees the QDQ form: constant weights dequantized (or kept int8), and each
// Q -> DQ between two operators computed as the fake quantization it is.
#include "constants.h"
#include "vkc/passes/passes.h"

namespace vkc::passes {
namespace {

ir::Node* onnx_node(ir::Graph& g, const ir::Node* at, const char* op, std::vector<ir::Value*> ins,
                    ir::TensorType t, int64_t opset = 13) {
  ir::Node* n = g.add_node(ir::kOnnxDomain, op, std::move(ins), {std::move(t)}, g.unique_name(at->name() + "_" + op), at);
  n->set_opset(opset);
  return n;
}

// DequantizeLinear(q, scale, zero point) as f32 of q's shape; per-axis scales along `axis`.
ir::Value* dequantize(ir::Graph& g, const ir::Node* at, ir::Value* q, ir::Value* s, ir::Value* z, int64_t axis) {
  ir::Node* dq = onnx_node(g, at, "DequantizeLinear", {q, s, z}, {ir::DType::Float32, q->shape()});
  if (s->shape().numel() > 1) dq->set_attr("axis", axis);
  return dq->output(0);
}

// The int32 bias of QLinearConv, as DequantizeLinear with scale x_scale * w_scale (per output channel).
ir::Value* bias(ir::Graph& g, const ir::Node* at, ir::Value* b, const ir::Value* xs, const ir::Value* ws) {
  const auto x = constant_floats(xs);
  const auto w = constant_floats(ws);
  if (!x || !w || x->size() != 1) return nullptr;
  std::vector<float> s(w->size());
  for (size_t i = 0; i < s.size(); ++i) s[i] = (*x)[0] * (*w)[i];
  ir::Value* scale = add_f32_constant(g, g.unique_name(at->name() + "_bias_scale"),
                                      s.size() == 1 ? std::vector<int64_t>{} : std::vector<int64_t>{int64_t(s.size())}, s);
  ir::Node* dq = onnx_node(g, at, "DequantizeLinear", {b, scale}, {ir::DType::Float32, b->shape()});
  if (s.size() > 1) dq->set_attr("axis", int64_t{0});
  return dq->output(0);
}

void expand(ir::Graph& g, ir::Node* n) {
  const bool conv = n->is_onnx("QLinearConv");
  ir::Value* y = n->output(0);
  if (!y->type().known()) return;
  const ir::TensorType f32{ir::DType::Float32, y->shape()};
  ir::Value* a = dequantize(g, n, n->input(0), n->input(1), n->input(2), 1);
  ir::Value* b = dequantize(g, n, n->input(3), n->input(4), n->input(5), conv ? 0 : 1);
  std::vector<ir::Value*> ins = {a, b};
  if (conv && n->num_inputs() > 8 && n->input(8)) {
    ir::Value* c = bias(g, n, n->input(8), n->input(1), n->input(4));
    if (!c) return;
    ins.push_back(c);
  }
  ir::Node* op = onnx_node(g, n, conv ? "Conv" : "MatMul", ins, f32);
  if (conv)
    for (const char* k : {"auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"})
      if (const ir::Attribute* v = n->attr(k)) op->set_attr(k, *v);
  ir::Node* q = onnx_node(g, n, "QuantizeLinear", {op->output(0), n->input(6), n->input(7)}, y->type());
  g.replace_all_uses(y, q->output(0));
  g.remove_node(n);
}

}  // namespace

void expand_qlinear_ops(ir::Graph& g, PassContext&) {
  for (ir::Node* n : g.nodes())
    if (n->is_onnx("QLinearConv") || n->is_onnx("QLinearMatMul")) expand(g, n);
}

}  // namespace vkc::passes
