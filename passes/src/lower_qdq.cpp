// lower-qdq: pre-quantized QDQ graphs (ONNX QuantizeLinear / DequantizeLinear, as onnxruntime's
// quantize_static and PyTorch's PT2E export write them) become what the runtime runs, computing
// the numbers onnxruntime's dequantized semantics give:
//  - DequantizeLinear of a constant int8 matrix without zero points, per output channel or per
//    tensor, read only as the weight (B) of MatMul / Gemm: the MatMul or Gemm becomes ET-VK's int8
//    linear, aten._weight_int8pack_mm(x, w [N, K] int8, scales [N]) (+ aten.add.Tensor for a bias),
//    the int8 values kept as they are.
//  - Every other DequantizeLinear of a constant (conv weights, int32 biases, uint8 or zero-pointed
//    or blocked weights, embedding tables) is dequantized on the host into an f32 constant: exact,
//    and the float operators that read it are unchanged.
//  - QuantizeLinear -> DequantizeLinear on an activation, per tensor with one scale and zero point:
//    the fake quantization it computes, as float operators the GPU runs,
//      y = Clip(Round(x / s), qmin - zp, qmax - zp) * s   (== (saturate(round(x / s) + zp) - zp) * s).
// Anything else (an integer tensor entering or leaving the graph, per-axis activation scales) stays
// in ONNX form and the partitioner reports it.
#include <fmt/format.h>

#include <cstring>

#include "constants.h"
#include "vkc/kernels/quantized.h"
#include "vkc/passes/passes.h"

namespace vkc::passes {
namespace {

using Ints = std::vector<int64_t>;

bool is_constant_scalar(const ir::Value* v) { return v && v->is_constant() && v->shape().is_static() && v->shape().numel() == 1; }

kernels::HostTensor host(const ir::Value* v) { return {v->dtype(), v->shape().sizes(), v->data()}; }

// The integer range of a quantized dtype.
std::optional<std::pair<int64_t, int64_t>> quant_range(ir::DType t) {
  switch (t) {
    case ir::DType::UInt8: return std::pair<int64_t, int64_t>{0, 255};
    case ir::DType::Int8: return std::pair<int64_t, int64_t>{-128, 127};
    case ir::DType::UInt16: return std::pair<int64_t, int64_t>{0, 65535};
    case ir::DType::Int16: return std::pair<int64_t, int64_t>{-32768, 32767};
    default: return std::nullopt;
  }
}

ir::Node* onnx_node(ir::Graph& g, const char* op, std::vector<ir::Value*> ins, const ir::TensorType& out,
                    const std::string& base, const ir::Node* before) {
  ir::Node* n = g.add_node(ir::kOnnxDomain, op, std::move(ins), {out}, g.unique_name(base + "_" + op), before);
  n->set_opset(13);
  return n;
}

ir::Value* f32_scalar(ir::Graph& g, const std::string& name, double v) {
  return add_f32_constant(g, g.unique_name(name), {}, {static_cast<float>(v)});
}

// ---- constant weights

void dequantize_on_host(ir::Graph& g, ir::Node* dq) {
  const ir::Value* zp = dq->num_inputs() > 2 ? dq->input(2) : nullptr;
  const kernels::HostTensor zp_host = zp ? host(zp) : kernels::HostTensor{};
  const kernels::HostTensor out = kernels::dequantize_linear(host(dq->input(0)), host(dq->input(1)),
                                                             zp ? &zp_host : nullptr, dq->attr_int("axis", 1),
                                                             dq->attr_int("block_size", 0));
  ir::Value* c = g.add_constant(g.unique_name(dq->output(0)->name() + "_f32"),
                                {ir::DType::Float32, ir::Shape::of(out.shape)}, out.data);
  g.replace_all_uses(dq->output(0), c);
  g.remove_node(dq);
}

// How one MatMul/Gemm reads an int8 weight [rows, cols]: whether it is stored [N, K], its K, alpha.
struct WeightUse {
  ir::Node* node;
  bool nk;
  float alpha;
};

// The uses of dq's output when every one is the B of a MatMul / Gemm the int8 linear can run, with the
// scale per output channel (or per tensor); else empty.
std::vector<WeightUse> int8_linear_uses(const ir::Graph& g, const ir::Node* dq) {
  const ir::Value* w = dq->input(0);
  const ir::Value* scale = dq->input(1);
  const ir::Value* zp = dq->num_inputs() > 2 ? dq->input(2) : nullptr;
  if (w->dtype() != ir::DType::Int8 || w->shape().rank() != 2 || !scale->is_constant() ||
      scale->shape().rank() > 1 || dq->attr_int("block_size", 0) != 0 || g.is_output(dq->output(0)))
    return {};
  if (zp) {
    auto z = constant_ints(zp);
    if (!z || std::any_of(z->begin(), z->end(), [](int64_t v) { return v != 0; })) return {};
  }
  const bool per_tensor = scale->shape().numel() == 1;
  const int64_t axis = dq->attr_int("axis", 1) < 0 ? dq->attr_int("axis", 1) + 2 : dq->attr_int("axis", 1);
  std::vector<WeightUse> uses;
  for (ir::Node* u : g.users(dq->output(0))) {
    if (u->input(1) != dq->output(0) || u->input(0) == dq->output(0)) return {};
    WeightUse use{u, false, 1.0f};
    if (u->is_onnx("Gemm")) {
      if (u->attr_int("transA", 0) != 0) return {};
      use.nk = u->attr_int("transB", 0) != 0;
      use.alpha = static_cast<float>(u->attr_float("alpha", 1.0));
      const ir::Value* c = u->num_inputs() > 2 ? u->input(2) : nullptr;
      // C is a float constant, or an int32 bias DequantizeLinear this pass turns into one first.
      const ir::Node* cdq = c ? c->producer() : nullptr;
      const bool pending = cdq && cdq->is_onnx("DequantizeLinear") && cdq->input(0)->is_constant();
      if (c && !pending && (!c->is_constant() || !ir::is_float(c->dtype()))) return {};
    } else if (!u->is_onnx("MatMul")) {
      return {};
    }
    const ir::Value* x = u->input(0);
    if (!x->type().known() || !x->shape().is_static() || (x->shape().rank() != 2 && x->shape().rank() != 3)) return {};
    const int64_t k = w->shape().sizes()[use.nk ? 1 : 0];
    if (k % 4 != 0 || (!per_tensor && axis != (use.nk ? 0 : 1))) return {};
    uses.push_back(use);
  }
  return uses;
}

void lower_int8_linears(ir::Graph& g, ir::Node* dq, const std::vector<WeightUse>& uses) {
  const ir::Value* w = dq->input(0);
  const auto scales_in = *constant_floats(dq->input(1));
  const int64_t rows = w->shape().sizes()[0], cols = w->shape().sizes()[1];
  const auto q = w->data().as<int8_t>();
  ir::Value* stored[2] = {nullptr, nullptr};  // [N, K] weights for nk = false / true
  for (const WeightUse& use : uses) {
    ir::Node* u = use.node;
    const int64_t n = use.nk ? rows : cols, k = use.nk ? cols : rows;
    ir::Value*& nk = stored[use.nk];
    if (!nk) {
      std::vector<uint8_t> bytes(static_cast<size_t>(n * k));
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < k; ++j) bytes[i * k + j] = static_cast<uint8_t>(use.nk ? q[i * k + j] : q[j * n + i]);
      nk = g.add_constant(g.unique_name(w->name() + "_q8"), {ir::DType::Int8, ir::Shape::of({n, k})},
                          ir::TensorData::owned(std::move(bytes)));
    }
    std::vector<float> s(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) s[i] = scales_in[scales_in.size() == 1 ? 0 : i] * use.alpha;
    ir::Value* scales = add_f32_constant(g, g.unique_name(w->name() + "_scales"), {n}, s);
    ir::Value* bias = u->is_onnx("Gemm") && u->num_inputs() > 2 ? u->input(2) : nullptr;
    if (!bias) {
      u->morph(ir::kVulkanDomain, "aten._weight_int8pack_mm.default", {u->input(0), nk, scales}, {});
      continue;
    }
    auto c = *constant_floats(bias);
    for (float& v : c) v *= static_cast<float>(u->attr_float("beta", 1.0));
    ir::Value* b = add_f32_constant(g, g.unique_name(u->name() + "_bias"), bias->shape().sizes(), c);
    ir::Node* mm = g.add_node(ir::kVulkanDomain, "aten._weight_int8pack_mm.default", {u->input(0), nk, scales},
                              {u->output(0)->type()}, g.unique_name(u->name() + "_q8mm"), u);
    u->morph(ir::kVulkanDomain, "aten.add.Tensor", {mm->output(0), b}, {});
  }
  g.remove_node(dq);
}

// ---- activations

// Q -> DQ with one constant scale and zero point (per tensor) on an f32 activation.
bool lower_fake_quant(ir::Graph& g, ir::Node* dq) {
  ir::Node* q = dq->input(0)->producer();
  if (!q || !q->is_onnx("QuantizeLinear")) return false;
  ir::Value* x = q->input(0);
  const ir::Value* zq = q->num_inputs() > 2 ? q->input(2) : nullptr;
  const ir::Value* zd = dq->num_inputs() > 2 ? dq->input(2) : nullptr;
  if (x->dtype() != ir::DType::Float32 || !is_constant_scalar(q->input(1)) || !is_constant_scalar(dq->input(1)) ||
      (zq && !is_constant_scalar(zq)) || (zd && !is_constant_scalar(zd)))
    return false;
  const double s = *constant_scalar(q->input(1));
  const int64_t z = zq ? static_cast<int64_t>(*constant_scalar(zq)) : 0;
  if (s != *constant_scalar(dq->input(1)) || z != (zd ? static_cast<int64_t>(*constant_scalar(zd)) : 0) || s <= 0)
    return false;
  const auto range = quant_range(q->output(0)->dtype());
  if (!range || q->attr_int("saturate", 1) != 1) return false;
  const std::string base = dq->name().empty() ? "qdq" : dq->name();
  const ir::TensorType t = x->type();
  ir::Value* scale = f32_scalar(g, base + "_scale", s);
  ir::Value* y = onnx_node(g, "Div", {x, scale}, t, base, dq)->output(0);
  y = onnx_node(g, "Round", {y}, t, base, dq)->output(0);
  y = onnx_node(g, "Clip", {y, f32_scalar(g, base + "_lo", double(range->first - z)),
                            f32_scalar(g, base + "_hi", double(range->second - z))},
                t, base, dq)->output(0);
  y = onnx_node(g, "Mul", {y, scale}, t, base, dq)->output(0);
  g.replace_all_uses(dq->output(0), y);
  g.remove_node(dq);
  return true;
}

// DequantizeLinear(Gather(table, ids)) with one scale and zero point (onnxruntime's quantized
// embedding tables) is Gather(DequantizeLinear(table), ids): per-tensor dequantization commutes with
// picking rows, and the dequantize of the constant table then happens on the host.
void hoist_over_gather(ir::Graph& g, ir::Node* dq) {
  ir::Node* gather = dq->input(0)->producer();
  if (!gather || !gather->is_onnx("Gather") || !gather->input(0)->is_constant()) return;
  ir::Value* s = dq->input(1);
  ir::Value* zp = dq->num_inputs() > 2 ? dq->input(2) : nullptr;
  if (!is_constant_scalar(s) || (zp && !is_constant_scalar(zp)) || dq->attr_int("block_size", 0) != 0) return;
  ir::Value* table = gather->input(0);
  std::vector<ir::Value*> ins = {table, s};
  if (zp) ins.push_back(zp);
  ir::Value* rows = add_onnx_node(g, dq, "DequantizeLinear", std::move(ins), {dq->output(0)->dtype(), table->shape()});
  ir::Value* out = add_onnx_node(g, dq, "Gather", {rows, gather->input(1)}, dq->output(0)->type(),
                                 {{"axis", gather->attr_int("axis", 0)}});
  g.replace_all_uses(dq->output(0), out);
  g.remove_node(dq);  // the integer Gather, now unread, goes with dead code
}

}  // namespace

void lower_qdq(ir::Graph& g, PassContext&) {
  for (ir::Node* n : g.nodes())
    if (n->is_onnx("DequantizeLinear")) hoist_over_gather(g, n);
  std::vector<std::pair<ir::Node*, std::vector<WeightUse>>> linears;
  for (ir::Node* n : g.nodes()) {
    if (!n->is_onnx("DequantizeLinear") || n->num_inputs() < 2 || !n->input(0) || !n->input(1)) continue;
    const ir::Value* x = n->input(0);
    const ir::Value* zp = n->num_inputs() > 2 ? n->input(2) : nullptr;
    if (x->is_constant() && n->input(1)->is_constant() && (!zp || zp->is_constant())) {
      // Biases first (so Gemm's C is an f32 constant when its weight is lowered below).
      if (auto uses = int8_linear_uses(g, n); !uses.empty())
        linears.emplace_back(n, std::move(uses));
      else
        dequantize_on_host(g, n);
    } else {
      lower_fake_quant(g, n);
    }
  }
  for (auto& [dq, uses] : linears) {
    // A bias dequantized above may have changed a Gemm's input: check again.
    if (int8_linear_uses(g, dq).size() == uses.size()) lower_int8_linears(g, dq, uses);
    else dequantize_on_host(g, dq);
  }
}

}  // namespace vkc::passes
