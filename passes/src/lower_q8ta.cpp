// lower-q8ta: static-int8 (QDQ) graphs keep their activations in int8 between operators, on
// ExecuTorch Vulkan's q8ta operators, the way ET-VK's own export fuses dq -> op -> q
// (patterns/quantized_{convolution,linear,binary,unary}.py):
//  - DequantizeLinear(a) -> Conv -> [Relu] -> QuantizeLinear, the weight a DequantizeLinear of an
//    int8 constant without zero points (per output channel or per tensor), becomes
//    et_vk.q8ta_conv2d / _dw (depthwise) / _pw (1x1, stride 1, no padding);
//  - the same around Gemm / MatMul with a constant int8 weight: et_vk.q8ta_linear (_gemv for one row);
//  - DequantizeLinear(a), DequantizeLinear(b) -> Add -> QuantizeLinear: et_vk.q8ta_add;
//  - DequantizeLinear(a) -> Relu -> QuantizeLinear: et_vk.q8ta_relu.
// The int8 tensor a fused operator reads is the output of another one, or of a
// quantize_per_tensor made from the activation's QuantizeLinear; a DequantizeLinear of an int8
// tensor that stays becomes dequantize_per_tensor. uint8 activations become int8 exactly
// (q - 128, zero point - 128) first. Whatever does not match (per-axis activation scales, weights
// with zero points, asymmetric padding, shapes the runtime's kernels refuse) is left to lower-qdq,
// which computes it as fake quantization in float; --quant-report lists both.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>

#include "constants.h"
#include "vkc/ir/op_registry.h"
#include "vkc/kernels/quantized.h"
#include "vkc/passes/passes.h"
#include "vkc/passes/quantize.h"

namespace vkc::passes {
namespace {

using Ints = std::vector<int64_t>;

struct QP {
  double scale = 1.0;
  int64_t zp = 0;
};

bool scalar_constant(const ir::Value* v) {
  return v && v->is_constant() && v->shape().is_static() && v->shape().numel() == 1;
}

// Per-tensor parameters of a QuantizeLinear / DequantizeLinear on an 8-bit tensor of `t`.
std::optional<QP> act_params(const ir::Node* n, ir::DType t) {
  const ir::Value* s = n->input(1);
  const ir::Value* z = n->num_inputs() > 2 ? n->input(2) : nullptr;
  if (!scalar_constant(s) || (z && !scalar_constant(z)) || n->attr_int("block_size", 0) != 0) return std::nullopt;
  if (z && z->dtype() != t) return std::nullopt;
  const double scale = *constant_scalar(s);
  const int64_t zp = z ? static_cast<int64_t>(*constant_scalar(z)) : 0;
  if (!(scale > 0) || !std::isfinite(scale)) return std::nullopt;
  if (t == ir::DType::Int8) return QP{scale, zp};
  if (t == ir::DType::UInt8) return QP{scale, zp - 128};
  return std::nullopt;
}

// A QuantizeLinear of a float activation to 8 bits, per tensor, saturating.
bool is_act_quantize(const ir::Node* q) {
  return q && q->is_onnx("QuantizeLinear") && !q->input(0)->is_constant() &&
         q->input(0)->dtype() == ir::DType::Float32 && q->attr_int("saturate", 1) == 1 &&
         act_params(q, q->output(0)->dtype()).has_value();
}

// A packed int8 tensor some fused operator (or quantize_per_tensor) of this pass produced.
bool is_int8_activation(const ir::Value* v) {
  return v->producer() && v->producer()->domain() == ir::kVulkanDomain && ir::is_packed_int8_value(v);
}

ir::Node* vk_node(ir::Graph& g, const char* op, std::vector<ir::Value*> ins, ir::TensorType out, const std::string& base,
                  ir::AttributeMap attrs, const ir::Node* before) {
  ir::Node* n = g.add_node(ir::kVulkanDomain, op, std::move(ins), {std::move(out)}, g.unique_name(base), before);
  n->attrs() = std::move(attrs);
  return n;
}

class Lowering {
 public:
  Lowering(ir::Graph& g, PassContext& ctx) : g_(g), ctx_(ctx) {}

  void run() {
    to_int8_activations();
    for (ir::Node* n : g_.nodes()) {
      const bool weighted = n->is_onnx("Conv") || n->is_onnx("Gemm") || n->is_onnx("MatMul");
      if (weighted) {
        const std::string why = n->is_onnx("Conv") ? conv(n) : linear(n);
        if (!why.empty() && n->num_inputs() > 1 && int8_weight(n->input(1))) left(n, why);
      } else if (n->is_onnx("Add")) {
        add(n);
      } else if (n->is_onnx("Relu")) {
        relu(n);
      }
    }
    // Activation QDQs around operators without an int8 kernel stay fake quantization (lower-qdq).
    for (ir::Node* q : g_.nodes())
      if (is_act_quantize(q) && !g_.users(q->output(0)).empty()) float_activation(q);
    // Every DequantizeLinear of an int8 activation left is a boundary back to float.
    for (ir::Node* n : g_.nodes()) {
      if (!n->is_onnx("DequantizeLinear") || !is_int8_activation(n->input(0))) continue;
      const auto p = act_params(n, ir::DType::Int8);
      if (!p) continue;
      ir::Node* d = vk_node(g_, "quantized_decomposed.dequantize_per_tensor.default", {n->input(0)},
                            {ir::DType::Float32, n->output(0)->shape()}, n->output(0)->name() + "_dequantize",
                            boundary_attrs(*p), n);
      g_.replace_all_uses(n->output(0), d->output(0));
      g_.remove_node(n);
    }
  }

 private:
  // uint8 activation Q -> DQs become int8 ones (values and zero points - 128): exact.
  void to_int8_activations() {
    for (ir::Node* q : g_.nodes()) {
      if (!is_act_quantize(q) || q->output(0)->dtype() != ir::DType::UInt8 || g_.is_output(q->output(0))) continue;
      const auto users = g_.users(q->output(0));
      const bool all_dq = std::all_of(users.begin(), users.end(), [](const ir::Node* u) {
        return u->is_onnx("DequantizeLinear") && act_params(u, ir::DType::UInt8).has_value();
      });
      if (users.empty() || !all_dq) continue;
      shift_zero_point(q);
      for (ir::Node* dq : users) shift_zero_point(dq);
      ir::TensorType t = q->output(0)->type();
      t.dtype = ir::DType::Int8;
      q->output(0)->set_type(t);
    }
  }

  void shift_zero_point(ir::Node* n) {
    const QP p = *act_params(n, ir::DType::UInt8);
    ir::Value* z = g_.add_constant(g_.unique_name(n->name() + "_zero_point_i8"), {ir::DType::Int8, ir::Shape::of({})},
                                   ir::TensorData::owned(std::vector<uint8_t>{static_cast<uint8_t>(int8_t(p.zp))}));
    if (n->num_inputs() > 2) n->set_input(2, z);
    else n->set_inputs({n->input(0), n->input(1), z});
  }

  static ir::AttributeMap boundary_attrs(QP p) {
    return {{"scale", p.scale}, {"zero_point", p.zp}, {"quant_min", int64_t{-128}}, {"quant_max", int64_t{127}}};
  }

  // The int8 tensor and its parameters behind DequantizeLinear output `v`.
  struct Source {
    ir::Value* int8 = nullptr;
    QP p;
  };
  std::optional<Source> source(ir::Value* v) {
    ir::Node* dq = v->producer();
    if (!dq || !dq->is_onnx("DequantizeLinear")) return std::nullopt;
    ir::Value* q = dq->input(0);
    const auto p = act_params(dq, ir::DType::Int8);
    if (!p || q->dtype() != ir::DType::Int8) return std::nullopt;
    if (is_int8_activation(q)) return Source{q, *p};
    ir::Node* qn = q->producer();
    if (!is_act_quantize(qn)) return std::nullopt;
    return Source{q, *p};  // made int8 by quantize_per_tensor when an operator is fused (int8_of)
  }

  // The quantize_per_tensor for an ONNX QuantizeLinear's output, made once.
  ir::Value* int8_of(ir::Value* q) {
    if (is_int8_activation(q)) return q;
    auto [it, fresh] = quantized_.try_emplace(q, nullptr);
    if (!fresh) return it->second;
    ir::Node* qn = q->producer();
    const QP p = *act_params(qn, ir::DType::Int8);
    ir::Node* n = vk_node(g_, "quantized_decomposed.quantize_per_tensor.default", {qn->input(0)},
                          {ir::DType::Int8, q->shape()}, q->name() + "_quantize", boundary_attrs(p), qn);
    g_.replace_all_uses(q, n->output(0));
    return it->second = n->output(0);
  }

  // The QuantizeLinear that alone reads `out` (through a Relu when `allow_relu`).
  struct Sink {
    ir::Node* q = nullptr;
    QP p;
    bool relu = false;
  };
  std::optional<Sink> sink(ir::Value* out, bool allow_relu) {
    Sink s;
    for (int hop = 0; hop < 2; ++hop) {
      const auto users = g_.users(out);
      if (users.size() != 1 || g_.is_output(out)) return std::nullopt;
      ir::Node* u = users[0];
      if (allow_relu && !s.relu && u->is_onnx("Relu")) {
        s.relu = true;
        out = u->output(0);
        continue;
      }
      if (!is_act_quantize(u) || u->output(0)->dtype() != ir::DType::Int8) return std::nullopt;
      s.q = u;
      s.p = *act_params(u, ir::DType::Int8);
      return s;
    }
    return std::nullopt;
  }

  // Int8 weights without zero points, scales per output channel (`axis` of the weight) or per tensor.
  struct Weights {
    const ir::Value* q = nullptr;
    std::vector<float> scales;
  };
  static std::optional<Weights> weights(const ir::Value* v, int64_t axis, int64_t channels) {
    const ir::Node* dq = v->producer();
    if (!dq || !dq->is_onnx("DequantizeLinear") || !dq->input(0)->is_constant() || !dq->input(1)->is_constant())
      return std::nullopt;
    const ir::Value* q = dq->input(0);
    const ir::Value* z = dq->num_inputs() > 2 ? dq->input(2) : nullptr;
    if (q->dtype() != ir::DType::Int8 || dq->attr_int("block_size", 0) != 0) return std::nullopt;
    if (z) {
      const auto zs = constant_ints(z);
      if (!zs || std::any_of(zs->begin(), zs->end(), [](int64_t x) { return x != 0; })) return std::nullopt;
    }
    auto s = constant_floats(dq->input(1));
    if (!s) return std::nullopt;
    const int64_t rank = static_cast<int64_t>(q->shape().rank());
    int64_t a = dq->attr_int("axis", 1);
    if (a < 0) a += rank;
    if (s->size() == 1) s->assign(static_cast<size_t>(channels), (*s)[0]);
    else if (a != axis || static_cast<int64_t>(s->size()) != channels) return std::nullopt;
    for (float x : *s)
      if (!(x > 0) || !std::isfinite(x)) return std::nullopt;
    return Weights{q, std::move(*s)};
  }

  // A constant float bias, or the DequantizeLinear of an int32 one, as `n` floats; empty for none.
  static std::optional<std::vector<float>> bias(const ir::Value* b, int64_t n) {
    if (!b) return std::vector<float>{};
    if (auto f = constant_floats(b); f && static_cast<int64_t>(f->size()) == n) return f;
    const ir::Node* dq = b->producer();
    if (!dq || !dq->is_onnx("DequantizeLinear")) return std::nullopt;
    for (size_t i = 0; i < dq->num_inputs(); ++i)
      if (dq->input(i) && !dq->input(i)->is_constant()) return std::nullopt;
    const ir::Value* z = dq->num_inputs() > 2 ? dq->input(2) : nullptr;
    auto host = [](const ir::Value* v) { return kernels::HostTensor{v->dtype(), v->shape().sizes(), v->data()}; };
    const kernels::HostTensor zh = z ? host(z) : kernels::HostTensor{};
    const kernels::HostTensor f = kernels::dequantize_linear(host(dq->input(0)), host(dq->input(1)), z ? &zh : nullptr,
                                                             dq->attr_int("axis", 1), 0);
    if (f.numel() != n) return std::nullopt;
    std::vector<float> out(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) out[i] = static_cast<float>(f.get_f(i));
    return out;
  }

  // weight_sums (int32), scales and bias (f32) padded to a multiple of 4, as ET-VK stores them.
  void add_channel_constants(std::vector<ir::Value*>& ins, const std::string& base, const std::vector<int32_t>& sums,
                             std::vector<float> scales, std::vector<float> b) {
    const auto n4 = static_cast<int64_t>((sums.size() + 3) / 4 * 4);
    std::vector<int32_t> s4 = sums;
    s4.resize(n4, 0);
    scales.resize(n4, 0.0f);
    std::vector<uint8_t> bytes(s4.size() * 4);
    std::memcpy(bytes.data(), s4.data(), bytes.size());
    ins.push_back(g_.add_constant(g_.unique_name(base + "_weight_sums"), {ir::DType::Int32, ir::Shape::of({n4})},
                                  ir::TensorData::owned(std::move(bytes))));
    ins.push_back(add_f32_constant(g_, g_.unique_name(base + "_weight_scales"), {n4}, scales));
    if (b.empty()) {
      ins.push_back(nullptr);
    } else {
      b.resize(n4, 0.0f);
      ins.push_back(add_f32_constant(g_, g_.unique_name(base + "_bias"), {n4}, b));
    }
  }

  // Replaces the sink's int8 output with the fused operator `op`'s.
  void emit(const char* op, const Source& x, std::vector<ir::Value*> ins, ir::AttributeMap attrs, const Sink& s,
            const ir::Node* anchor) {
    ir::Value* q = s.q->output(0);
    attrs["input_scale"] = x.p.scale;
    attrs["input_zero_point"] = x.p.zp;
    attrs["output_scale"] = s.p.scale;
    attrs["output_zero_point"] = s.p.zp;
    ir::Node* n = vk_node(g_, op, std::move(ins), {ir::DType::Int8, q->shape()}, anchor->name() + "_q8ta",
                          std::move(attrs), s.q);
    g_.replace_all_uses(q, n->output(0));
    g_.remove_node(s.q);
  }

  // Fuses a Conv; else says why not.
  std::string conv(ir::Node* n) {
    const ir::Value* w = n->input(1);
    if (!static_rank(n->input(0), 4) || !static_rank(w, 4) || !static_rank(n->output(0), 4))
      return "only 2-D convolutions with static shapes";
    const Ints xs = n->input(0)->shape().sizes(), ws = w->shape().sizes();
    const int64_t C = xs[1], OC = ws[0], KH = ws[2], KW = ws[3], G = n->attr_int("group", 1);
    if (xs[0] != 1) return "the runtime's int8 convolutions take batch 1";
    if (G < 1 || C % G != 0 || OC % G != 0 || ws[1] != C / G) return "groups do not divide the channels";
    const bool dw = G > 1 && G == C && OC == C;
    // The runtime's kernels: depthwise needs OC % 4 == 0; other grouped convolutions need 4 | C/G and 4 | OC/G.
    if (dw ? OC % 4 != 0 : (G > 1 && ((C / G) % 4 != 0 || (OC / G) % 4 != 0)))
      return "grouped int8 convolutions need multiples of 4 channels per group (depthwise: of 4 channels)";
    if (n->attr_string("auto_pad", "NOTSET") != "NOTSET" && n->attr_string("auto_pad", "NOTSET") != "VALID")
      return "auto_pad SAME is not supported";
    const Ints pads = n->attr_ints("pads", Ints(4, 0)), strides = n->attr_ints("strides", {1, 1}),
               dil = n->attr_ints("dilations", {1, 1}), kernel = n->attr_ints("kernel_shape", {KH, KW});
    if (pads.size() != 4 || pads[0] != pads[2] || pads[1] != pads[3] || strides.size() != 2 || dil.size() != 2 ||
        kernel != Ints{KH, KW})
      return "asymmetric padding is not supported";
    auto x = source(n->input(0));
    if (!x) return "its input is not a per-tensor 8-bit QuantizeLinear -> DequantizeLinear";
    auto s = sink(n->output(0), true);
    if (!s) return "its output is not read by one per-tensor int8 QuantizeLinear alone";
    auto wq = weights(w, 0, OC);
    if (!wq) return "its weight is not int8 without zero points, per output channel or per tensor";
    auto b = bias(n->num_inputs() > 2 ? n->input(2) : nullptr, OC);
    if (!b) return "its bias is not a constant";
    const auto q = wq->q->data().as<int8_t>();
    const int64_t cg = C / G, k = KH * KW * cg;
    std::vector<int32_t> sums(static_cast<size_t>(OC), 0);
    std::vector<uint8_t> packed;
    Ints packed_shape;
    if (dw) {  // [KH, KW, OC]
      packed.resize(static_cast<size_t>(KH * KW * OC));
      for (int64_t oc = 0; oc < OC; ++oc)
        for (int64_t t = 0; t < KH * KW; ++t) {
          packed[t * OC + oc] = static_cast<uint8_t>(q[oc * KH * KW + t]);
          sums[oc] += q[oc * KH * KW + t];
        }
      packed_shape = {KH, KW, OC};
    } else {  // [OC, pad4(KH * KW * C/G)], OHWI rows
      const int64_t k4 = (k + 3) / 4 * 4;
      packed.assign(static_cast<size_t>(OC * k4), 0);
      for (int64_t oc = 0; oc < OC; ++oc)
        for (int64_t i = 0; i < cg; ++i)
          for (int64_t t = 0; t < KH * KW; ++t) {
            const int8_t v = q[(oc * cg + i) * KH * KW + t];
            packed[oc * k4 + t * cg + i] = static_cast<uint8_t>(v);
            sums[oc] += v;
          }
      packed_shape = {OC, k4};
    }
    const bool pw = !dw && KH == 1 && KW == 1 && strides == Ints{1, 1} && dil == Ints{1, 1} && pads == Ints(4, 0);
    const Source in{int8_of(x->int8), x->p};
    std::vector<ir::Value*> ins = {in.int8, g_.add_constant(g_.unique_name(n->name() + "_weights_q8"),
                                                            {ir::DType::Int8, ir::Shape::of(packed_shape)},
                                                            ir::TensorData::owned(std::move(packed)))};
    add_channel_constants(ins, n->name(), sums, wq->scales, *b);
    const char* op = dw ? "et_vk.q8ta_conv2d_dw.default" : pw ? "et_vk.q8ta_conv2d_pw.default" : "et_vk.q8ta_conv2d.default";
    report(n, wq->q, "conv", OC, k, op, ins);
    emit(dw ? "et_vk.q8ta_conv2d_dw.default" : pw ? "et_vk.q8ta_conv2d_pw.default" : "et_vk.q8ta_conv2d.default", in,
         std::move(ins),
         {{"kernel_size", Ints{KH, KW}}, {"stride", strides}, {"padding", Ints{pads[0], pads[1]}}, {"dilation", dil},
          {"groups", G}, {"activation", std::string(s->relu ? "relu" : "none")}},
         *s, n);
    return {};
  }

  // Fuses a Gemm / MatMul; else says why not.
  std::string linear(ir::Node* n) {
    const bool gemm = n->is_onnx("Gemm");
    const ir::Value* w = n->input(1);
    if (!static_rank(n->input(0), 2) || !static_rank(w, 2)) return "only [M, K] x [K, N] products with static shapes";
    if (gemm && (n->attr_int("transA", 0) != 0 || n->attr_float("alpha", 1.0) != 1.0 || n->attr_float("beta", 1.0) != 1.0))
      return "Gemm with transA, alpha or beta";
    const bool nk = gemm && n->attr_int("transB", 0) != 0;
    const Ints ws = w->shape().sizes();
    const int64_t N = nk ? ws[0] : ws[1], K = nk ? ws[1] : ws[0], M = n->input(0)->shape().sizes()[0];
    if (K % 4 != 0 || n->input(0)->shape().sizes()[1] != K) return "the runtime's int8 linear needs K % 4 == 0";
    const ir::Value* c = gemm && n->num_inputs() > 2 ? n->input(2) : nullptr;
    if (c && (!c->shape().is_static() || c->shape().numel() != N)) return "its bias is not one value per output";
    auto x = source(n->input(0));
    if (!x) return "its input is not a per-tensor 8-bit QuantizeLinear -> DequantizeLinear";
    auto s = sink(n->output(0), true);
    if (!s) return "its output is not read by one per-tensor int8 QuantizeLinear alone";
    auto wq = weights(w, nk ? 0 : 1, N);
    if (!wq) return "its weight is not int8 without zero points, per output channel or per tensor";
    auto b = bias(c, N);
    if (!b) return "its bias is not a constant";
    const auto q = wq->q->data().as<int8_t>();
    std::vector<uint8_t> packed(static_cast<size_t>(N * K));
    std::vector<int32_t> sums(static_cast<size_t>(N), 0);
    for (int64_t i = 0; i < N; ++i)
      for (int64_t j = 0; j < K; ++j) {
        const int8_t v = nk ? q[i * K + j] : q[j * N + i];
        packed[i * K + j] = static_cast<uint8_t>(v);
        sums[i] += v;
      }
    const Source in{int8_of(x->int8), x->p};
    std::vector<ir::Value*> ins = {in.int8, g_.add_constant(g_.unique_name(n->name() + "_weights_q8"),
                                                            {ir::DType::Int8, ir::Shape::of({N, K})},
                                                            ir::TensorData::owned(std::move(packed)))};
    add_channel_constants(ins, n->name(), sums, wq->scales, *b);
    report(n, wq->q, "linear", N, K, M == 1 ? "et_vk.q8ta_linear_gemv.default" : "et_vk.q8ta_linear.default", ins);
    emit(M == 1 ? "et_vk.q8ta_linear_gemv.default" : "et_vk.q8ta_linear.default", in, std::move(ins),
         {{"activation", std::string(s->relu ? "relu" : "none")}}, *s, n);
    return {};
  }

  void add(ir::Node* n) {
    if (!n->output(0)->shape().is_static() || n->input(0)->type() != n->input(1)->type() ||
        n->input(0)->type() != n->output(0)->type())
      return;
    auto a = source(n->input(0));
    auto b = a ? source(n->input(1)) : std::nullopt;
    auto s = b ? sink(n->output(0), false) : std::nullopt;
    if (!s) return;
    ir::Value* ia = int8_of(a->int8);
    ir::Value* ib = int8_of(b->int8);
    ir::Value* q = s->q->output(0);
    ir::Node* k = vk_node(g_, "et_vk.q8ta_add.default", {ia, ib}, {ir::DType::Int8, q->shape()}, n->name() + "_q8ta",
                          {{"input_a_scale", a->p.scale}, {"input_a_zero_point", a->p.zp},
                           {"input_b_scale", b->p.scale}, {"input_b_zero_point", b->p.zp},
                           {"output_scale", s->p.scale}, {"output_zero_point", s->p.zp}, {"alpha", 1.0}},
                          s->q);
    g_.replace_all_uses(q, k->output(0));
    g_.remove_node(s->q);
  }

  void relu(ir::Node* n) {
    if (!n->output(0)->shape().is_static()) return;
    auto x = source(n->input(0));
    auto s = x ? sink(n->output(0), false) : std::nullopt;
    if (!s) return;
    ir::Value* in = int8_of(x->int8);
    ir::Value* q = s->q->output(0);
    ir::Node* k = vk_node(g_, "et_vk.q8ta_relu.default", {in}, {ir::DType::Int8, q->shape()}, n->name() + "_q8ta",
                          {{"input_scale", x->p.scale}, {"input_zero_point", x->p.zp}, {"output_scale", s->p.scale},
                           {"output_zero_point", s->p.zp}},
                          s->q);
    g_.replace_all_uses(q, k->output(0));
    g_.remove_node(s->q);
  }

  // A DequantizeLinear of an 8-bit constant: a layer the quantizer quantized.
  static bool int8_weight(const ir::Value* w) {
    const ir::Node* dq = w ? w->producer() : nullptr;
    return dq && dq->is_onnx("DequantizeLinear") && dq->input(0)->is_constant() &&
           (dq->input(0)->dtype() == ir::DType::Int8 || dq->input(0)->dtype() == ir::DType::UInt8);
  }

  // --quant-report: a fused layer, and the constants it stores.
  void report(const ir::Node* n, const ir::Value* w, const char* kind, int64_t rows, int64_t cols, const char* op,
              const std::vector<ir::Value*>& constants) {
    QuantLayerReport r;
    r.node = n->name();
    r.weight = w->name();
    r.kind = kind;
    r.rows = rows;
    r.cols = cols;
    r.quantized = true;
    r.op = op;
    r.bits = 8;
    r.bytes_before = static_cast<uint64_t>(rows * cols) * 4;
    for (const ir::Value* c : constants)
      if (c && c->is_constant()) r.bytes_after += c->data().size();
    r.source = "QDQ";
    ctx_.quant_report.push_back(std::move(r));
  }

  // --quant-report: a layer with int8 weights left to lower-qdq (dequantized weights, activations
  // fake-quantized in float), with the reason.
  void left(const ir::Node* n, const std::string& why) {
    QuantLayerReport r;
    r.node = n->name();
    r.weight = n->input(1)->name();
    r.kind = n->is_onnx("Conv") ? "conv" : "linear";
    r.reason = "not on int8 activations: " + why;
    r.op = "fake quantization (lower-qdq)";
    r.bits = 8;
    r.source = "QDQ";
    ctx_.quant_report.push_back(std::move(r));
  }

  // --quant-report: an activation quantized around an operator without an int8 kernel.
  void float_activation(const ir::Node* q) {
    const ir::Node* from = q->input(0)->producer();
    QuantLayerReport r;
    r.node = from ? from->name() : q->name();
    r.weight = q->input(0)->name();
    r.kind = "activation";
    r.reason = fmt::format("{} has no int8 kernel: its output is quantized in float",
                           from ? from->op_type() : std::string("a graph input"));
    r.op = "fake quantization (lower-qdq)";
    r.bits = 8;
    r.source = "QDQ";
    ctx_.quant_report.push_back(std::move(r));
  }

  static bool static_rank(const ir::Value* v, size_t rank) {
    return v && v->type().known() && v->shape().is_static() && v->shape().rank() == rank;
  }

  ir::Graph& g_;
  PassContext& ctx_;
  std::map<const ir::Value*, ir::Value*> quantized_;
};

}  // namespace

void lower_q8ta(ir::Graph& g, PassContext& ctx) { Lowering(g, ctx).run(); }

}  // namespace vkc::passes
