// drop-requantized-qdq: a QuantizeLinear -> DequantizeLinear round trip on an activation is
// removed when everything its values reach, through operators that only move, select or take
// maxima of values (reshapes, transposes, slices, concatenation, padding, max pooling, relu,
// ReduceMax/Min), is a QuantizeLinear with the same scale, zero point and integer type. The second
// quantization then gives the same integers with or without the first: the round trip
// r(x) = DQ(Q(x)) is monotone, so max(r(a), r(b)) = r(max(a, b)) and relu(r(x)) = r(relu(x)) (the
// zero point makes 0 exact), and Q(r(x)) = Q(x). onnxruntime's quantizer writes such pairs
// around MaxPool (Q -> DQ -> MaxPool -> Q -> DQ, both with the input's parameters); without this
// pass the first pair is computed as float fake quantization (four operators on the GPU). It runs
// after lower-q8ta, so that pairs an int8 operator takes stay its input or output quantization; the
// second QuantizeLinear may be the quantize_per_tensor lower-q8ta made of it.
#include <cmath>
#include <cstring>
#include <set>

#include "constants.h"
#include "vkc/passes/passes.h"
#include "vkc/passes/quantize.h"

namespace vkc::passes {
namespace {

// The real grid a quantization rounds to and clamps at: scale, and the integer range measured
// from the zero point (so int8 and uint8 with zero points 128 apart compare equal).
struct Params {
  float scale = 0;
  int64_t below = 0, above = 0;  // zero point - qmin, qmax - zero point
  bool operator==(const Params& o) const {
    return std::memcmp(&scale, &o.scale, sizeof scale) == 0 && below == o.below && above == o.above;
  }
};

std::optional<Params> grid(double scale, int64_t zp, int64_t qmin, int64_t qmax) {
  if (!(scale > 0) || !std::isfinite(scale) || zp < qmin || zp > qmax) return std::nullopt;
  return Params{static_cast<float>(scale), zp - qmin, qmax - zp};
}

// A per-tensor QuantizeLinear of a float activation (saturating, scalar constant parameters), or
// the quantize_per_tensor lower-q8ta made of one.
std::optional<Params> quantize_params(const ir::Node* q) {
  if (!q || !q->input(0) || q->input(0)->is_constant() || q->input(0)->dtype() != ir::DType::Float32) return std::nullopt;
  if (q->is(ir::kVulkanDomain, "quantized_decomposed.quantize_per_tensor.default"))
    return grid(q->attr_float("scale", 0), q->attr_int("zero_point", 0), q->attr_int("quant_min", -128),
                q->attr_int("quant_max", 127));
  if (!q->is_onnx("QuantizeLinear") || q->attr_int("saturate", 1) != 1 || q->attr_int("block_size", 0) != 0)
    return std::nullopt;
  const ir::Value* s = q->input(1);
  const ir::Value* z = q->num_inputs() > 2 ? q->input(2) : nullptr;
  const auto scale = constant_scalar(s);
  const auto zp = z ? constant_scalar(z) : std::optional<double>(0.0);
  if (!scale || !zp || s->dtype() != ir::DType::Float32) return std::nullopt;
  switch (q->output(0)->dtype()) {
    case ir::DType::Int8: return grid(*scale, static_cast<int64_t>(*zp), -128, 127);
    case ir::DType::UInt8: return grid(*scale, static_cast<int64_t>(*zp), 0, 255);
    case ir::DType::Int16: return grid(*scale, static_cast<int64_t>(*zp), -32768, 32767);
    case ir::DType::UInt16: return grid(*scale, static_cast<int64_t>(*zp), 0, 65535);
    default: return std::nullopt;
  }
}

// Whether `n` reading a value at input `i` commutes with a monotone elementwise map of it that
// keeps 0: data movement of its data input, max / min selections, relu.
bool commutes(const ir::Node* n, size_t i) {
  for (const char* op : {"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Transpose", "Identity", "Slice", "Split",
                         "Gather", "Expand", "Tile", "DepthToSpace", "SpaceToDepth", "Pad", "ReduceMax", "ReduceMin"})
    if (n->is_onnx(op)) return i == 0;
  if (n->is_onnx("Concat")) return true;
  if (n->is_onnx("MaxPool") || n->is_onnx("GlobalMaxPool") || n->is_onnx("Relu")) return i == 0;
  return false;
}

// Whether every use of `start`, through commuting operators, ends in a QuantizeLinear with `p`.
bool requantized_alike(const ir::Graph& g, const ir::Value* start, const Params& p) {
  std::vector<const ir::Value*> todo{start};
  std::set<const ir::Value*> seen{start};
  while (!todo.empty()) {
    const ir::Value* v = todo.back();
    todo.pop_back();
    if (g.is_output(v)) return false;
    for (const ir::Node* u : g.users(v)) {
      for (size_t i = 0; i < u->num_inputs(); ++i) {
        if (u->input(i) != v) continue;
        if (u->is_onnx("QuantizeLinear") || u->domain() == ir::kVulkanDomain) {
          if (i != 0 || quantize_params(u) != p) return false;
          continue;
        }
        if (!commutes(u, i)) return false;
        for (const ir::Value* out : u->outputs())
          if (out && seen.insert(out).second) {
            if (u->is_onnx("MaxPool") && out != u->output(0)) {  // indices: not values of the tensor
              if (!g.users(out).empty() || g.is_output(out)) return false;
              continue;
            }
            todo.push_back(out);
          }
      }
    }
  }
  return true;
}

}  // namespace

void drop_requantized_qdq(ir::Graph& g, PassContext& ctx) {
  for (ir::Node* dq : g.nodes()) {
    if (!dq->is_onnx("DequantizeLinear") || !dq->input(0) || dq->output(0)->dtype() != ir::DType::Float32) continue;
    ir::Node* q = dq->input(0)->producer();
    const auto p = q && q->is_onnx("QuantizeLinear") ? quantize_params(q) : std::nullopt;
    if (!p || dq->attr_int("block_size", 0) != 0) continue;
    // The DequantizeLinear undoes this QuantizeLinear: the same scale and zero point values.
    const auto scale = constant_scalar(dq->input(1));
    const auto zp = dq->num_inputs() > 2 && dq->input(2) ? constant_scalar(dq->input(2)) : std::optional<double>(0.0);
    const ir::Value* qz = q->num_inputs() > 2 ? q->input(2) : nullptr;
    const auto q_zp = qz ? constant_scalar(qz) : std::optional<double>(0.0);
    if (!scale || !zp || !q_zp || dq->input(1)->dtype() != ir::DType::Float32 || static_cast<float>(*scale) != p->scale ||
        *zp != *q_zp)
      continue;
    if (!requantized_alike(g, dq->output(0), *p)) continue;
    ir::Value* x = q->input(0);
    // --quant-report: lower-q8ta listed the activation as quantized in float; it is not computed.
    for (QuantLayerReport& r : ctx.quant_report)
      if (r.kind == "activation" && r.weight == x->name() && r.op == "fake quantization (lower-qdq)") {
        r.op = "none (drop-requantized-qdq)";
        r.reason += "; quantized again alike after it, so the round trip is dropped (exact)";
      }
    g.replace_all_uses(dq->output(0), x);
    g.remove_node(dq);
    if (g.users(q->output(0)).empty() && !g.is_output(q->output(0))) g.remove_node(q);
  }
}

}  // namespace vkc::passes
