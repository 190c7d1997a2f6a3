// expand-microsoft-ops: the com.microsoft contrib operators onnxruntime's transformer optimizer
// writes into exported models, rewritten as the standard operators they compute (which the
// fusions and lowering then handle):
//   Gelu(x)                                   -> Gelu(x, approximate "none")
//   FastGelu(x [, bias])                      -> Gelu(x + bias, approximate "tanh")
//   BiasGelu(x, bias)                         -> Gelu(x + bias)
//   QuickGelu(x, alpha = 1.702)               -> x * Sigmoid(alpha * x)
//   SkipLayerNormalization(x, skip, gamma [, beta [, bias]])
//                                             -> LayerNormalization(x + skip [+ bias], gamma, beta)
//   SimplifiedLayerNormalization(x, scale)    -> et_vk.rms_norm(x, scale, epsilon)  (also in the ONNX domain)
//   SkipSimplifiedLayerNormalization(x, skip, gamma [, bias])
//                                             -> et_vk.rms_norm(x + skip [+ bias], gamma, epsilon)
//   EmbedLayerNormalization(ids, segment_ids, word, position, segment, gamma, beta, mask, position_ids)
//                                             -> LayerNormalization(Gather(word, ids) + Gather(position,
//                                                position_ids or 0..S-1) [+ Gather(segment, segment_ids)])
//                                                (its mask_index and embedding_sum outputs unread)
//   GroupQueryAttention, RotaryEmbedding (onnxruntime-genai's decoders) -> microsoft_attention.h
//   FusedMatMul(A, B, alpha, transA, transB)  -> alpha * MatMul(A or A^T, B or B^T)
//   Attention, MultiHeadAttention (onnxruntime's transformer optimizer) -> microsoft_attention.h
//   BiasAdd(x, bias, skip)                    -> x + bias + skip
//   BiasSplitGelu(x, bias)                    -> a * Gelu(b), a and b the halves of x + bias (last axis)
//   GemmFastGelu(x, w [, bias])               -> Gelu(MatMul(x, w) [+ bias], approximate "tanh")
//   GatherBlockQuantized (a tied int4 embedding)  -> Gather of the dequantized table (quant/gather_block_quantized.h)
// The skip forms' optional 4th output (the sum) is the Add's output. Nodes whose mean / inverse
// standard deviation outputs are read, or that normalize over another axis, stay and are reported.
#include <fmt/format.h>

#include <cstring>

#include "attention/microsoft_attention.h"
#include "constants.h"
#include "vkc/ir/half.h"
#include "quant/gather_block_quantized.h"
#include "vkc/passes/passes.h"

namespace vkc::passes {
namespace {

bool contrib(const ir::Node* n, std::string_view op) { return n->is(ir::kMicrosoftDomain, op); }

// `v`'s type when known, else `like`'s (onnx's shape inference does not know contrib ops).
ir::TensorType type_or(const ir::Value* v, const ir::Value* like) { return v->type().known() ? v->type() : like->type(); }

ir::Value* onnx_op(ir::Graph& g, ir::Node* at, const char* op, std::vector<ir::Value*> ins, ir::TensorType t,
                   ir::AttributeMap attrs = {}, int64_t opset = 17) {
  ir::Node* n = g.add_node(ir::kOnnxDomain, op, std::move(ins), {std::move(t)}, g.unique_name(at->name() + "_" + op), at);
  n->attrs() = std::move(attrs);
  n->set_opset(opset);
  return n->output(0);
}

// Whether outputs [first, last) of n are absent or unread.
bool unread(const ir::Graph& g, const ir::Node* n, size_t first, size_t last) {
  for (size_t i = first; i < last && i < n->outputs().size(); ++i)
    if (n->output(i) && (g.is_output(n->output(i)) || !g.users(n->output(i)).empty())) return false;
  return true;
}

// x + skip [+ bias] for the skip normalizations; the sum also feeds output 3 when present.
ir::Value* skip_sum(ir::Graph& g, ir::Node* n, size_t bias_input) {
  const ir::TensorType t = type_or(n->output(0), n->input(0));
  ir::Value* s = onnx_op(g, n, "Add", {n->input(0), n->input(1)}, t);
  if (n->num_inputs() > bias_input && n->input(bias_input)) s = onnx_op(g, n, "Add", {s, n->input(bias_input)}, t);
  if (n->outputs().size() > 3 && n->output(3)) g.replace_all_uses(n->output(3), s);
  return s;
}

bool last_axis(const ir::Node* n) {
  const int64_t axis = n->attr_int("axis", -1);
  const ir::Value* x = n->input(0);
  return axis == -1 || (x->type().known() && axis == static_cast<int64_t>(x->shape().rank()) - 1);
}

// BiasSplitGelu(x [..., 2C], bias [2C]): the halves a, b of x + bias on the last axis, a * Gelu(b).
ir::Value* bias_split_gelu(ir::Graph& g, ir::Node* n) {
  ir::Value* x = n->input(0);
  if (n->num_inputs() < 2 || !x->type().known() || !x->shape().is_static() || x->shape().rank() == 0 ||
      x->shape().sizes().back() % 2 != 0)
    return nullptr;
  auto sizes = x->shape().sizes();
  const int64_t width = sizes.back(), last = static_cast<int64_t>(sizes.size()) - 1;
  ir::Value* sum = onnx_op(g, n, "Add", {x, n->input(1)}, x->type());
  sizes.back() = width / 2;
  const ir::TensorType half{x->dtype(), ir::Shape::of(sizes)};
  const auto slice = [&](int64_t begin, int64_t end) {
    const auto c = [&](int64_t v) { return add_i64_constant(g, g.unique_name(n->name() + "_c"), {1}, {v}); };
    return onnx_op(g, n, "Slice", {sum, c(begin), c(end), c(last)}, half, {}, 13);
  };
  ir::Value* gate = onnx_op(g, n, "Gelu", {slice(width / 2, width)}, half, {{"approximate", std::string("none")}}, 20);
  return onnx_op(g, n, "Mul", {slice(0, width / 2), gate}, half);
}

void finish(ir::Graph& g, ir::Node* n, ir::Value* result) {
  g.replace_all_uses(n->output(0), result);
  g.remove_node(n);
}

ir::Value* input_or_null(const ir::Node* n, size_t i) { return n->num_inputs() > i ? n->input(i) : nullptr; }

// EmbedLayerNormalization with static [B, S] ids: the three embedding lookups, summed and normalized
// (the sum is output 2, embedding_sum).
ir::Value* embed_layer_norm(ir::Graph& g, ir::Node* n) {
  ir::Value* ids = n->input(0);
  ir::Value* word = input_or_null(n, 2);
  ir::Value* pos = input_or_null(n, 3);
  ir::Value* gamma = input_or_null(n, 5);
  ir::Value* beta = input_or_null(n, 6);
  if (!word || !pos || !gamma || !beta || !ids->type().known() || !ids->shape().is_static() ||
      ids->shape().rank() != 2 || !word->type().known() || word->shape().rank() != 2 || !word->shape().is_static() ||
      !pos->type().known() || pos->shape().rank() != 2 || !pos->shape().is_static())
    return nullptr;
  const auto sz = ids->shape().sizes();
  const int64_t hidden = word->shape().sizes()[1];
  const ir::TensorType out{word->dtype(), ir::Shape::of({sz[0], sz[1], hidden})};
  ir::Value* sum = onnx_op(g, n, "Gather", {word, ids}, out, {{"axis", int64_t{0}}});
  ir::Value* positions = input_or_null(n, 8);
  ir::TensorType pos_t{word->dtype(), ir::Shape::of({sz[1], hidden})};
  if (positions) {
    if (!positions->type().known() || !positions->shape().is_static()) return nullptr;
    auto ps = positions->shape().sizes();
    ps.push_back(hidden);
    pos_t = {word->dtype(), ir::Shape::of(ps)};
  } else {
    std::vector<uint8_t> bytes(static_cast<size_t>(sz[1]) * sizeof(int64_t));
    for (int64_t i = 0; i < sz[1]; ++i) std::memcpy(bytes.data() + i * sizeof(int64_t), &i, sizeof(int64_t));
    positions = g.add_constant(g.unique_name(n->name() + "_positions"), {ir::DType::Int64, ir::Shape::of({sz[1]})},
                               ir::TensorData::owned(std::move(bytes)));
  }
  sum = onnx_op(g, n, "Add", {sum, onnx_op(g, n, "Gather", {pos, positions}, pos_t, {{"axis", int64_t{0}}})}, out);
  ir::Value* segments = input_or_null(n, 1);
  ir::Value* segment_table = input_or_null(n, 4);
  if (segments && segment_table)
    sum = onnx_op(g, n, "Add", {sum, onnx_op(g, n, "Gather", {segment_table, segments}, out, {{"axis", int64_t{0}}})},
                  out);
  // Output 2, the sum before normalization (GPT-2's residual reads it), when present.
  if (n->outputs().size() > 2 && n->output(2)) g.replace_all_uses(n->output(2), sum);
  return onnx_op(g, n, "LayerNormalization", {sum, gamma, beta}, out,
                 {{"axis", int64_t{-1}}, {"epsilon", n->attr_float("epsilon", 1e-12)}});
}

// FusedMatMul(A, B) = alpha * (A or A^T) @ (B or B^T) (transA/transB swap the last two axes); the
// batch transposes (transBatchA/B) are left to the partitioner's report. An operand whose shape
// is computed in the graph (typed only once fold-constants ran) takes the other's rank; the
// MatMul's type is then left for propagate_shapes.
ir::Value* fused_matmul(ir::Graph& g, ir::Node* n) {
  if (n->attr_int("transBatchA", 0) || n->attr_int("transBatchB", 0)) return nullptr;
  ir::Value* a = n->input(0);
  ir::Value* b = n->input(1);
  const auto rank_of = [&](const ir::Value* x, const ir::Value* other) -> size_t {
    return x->type().known() ? x->shape().rank() : other->type().known() ? other->shape().rank() : 0;
  };
  const ir::DType dt = a->type().known() ? a->dtype() : b->dtype();
  if (!ir::is_float(dt)) return nullptr;
  auto swapped = [&](ir::Value* x, size_t rank) -> ir::Value* {
    if (rank < 2) return nullptr;
    std::vector<int64_t> perm(rank);
    for (size_t i = 0; i < rank; ++i) perm[i] = static_cast<int64_t>(i);
    std::swap(perm[rank - 1], perm[rank - 2]);
    ir::TensorType t;
    if (x->type().known()) {
      t = x->type();
      std::swap(t.shape.dims[rank - 1], t.shape.dims[rank - 2]);
    }
    return onnx_op(g, n, "Transpose", {x}, t, {{"perm", perm}}, 13);
  };
  if (n->attr_int("transA", 0) && !(a = swapped(a, rank_of(a, b)))) return nullptr;
  if (n->attr_int("transB", 0) && !(b = swapped(b, rank_of(b, a)))) return nullptr;
  ir::Value* y = onnx_op(g, n, "MatMul", {a, b}, n->output(0)->type(), {}, 13);
  const double alpha = n->attr_float("alpha", 1.0);
  if (alpha == 1.0) return y;
  std::vector<uint8_t> bytes(dt == ir::DType::Float16 ? 2 : 4);
  if (dt == ir::DType::Float16) {
    const uint16_t h = ir::float_to_half(static_cast<float>(alpha));
    std::memcpy(bytes.data(), &h, 2);
  } else {
    const float f = static_cast<float>(alpha);
    std::memcpy(bytes.data(), &f, 4);
  }
  ir::Value* c = g.add_constant(g.unique_name(n->name() + "_alpha"), {dt, ir::Shape::of({})},
                                ir::TensorData::owned(std::move(bytes)));
  return onnx_op(g, n, "Mul", {y, c}, n->output(0)->type(), {}, 13);
}

// Types ONNX's inference left unknown past contrib operators: the rewritten norms take their
// input's, MatMulNBits [..., K] x [K, N] gives [..., N], the standard operators after them
// propagate_shapes's.
void settle_types(ir::Graph& g) {
  for (bool changed = true; changed;) {
    changed = propagate_shapes(g);
    for (ir::Node* n : g.nodes()) {
      ir::Value* x = n->num_inputs() > 0 ? n->input(0) : nullptr;
      if (!x || n->output(0)->type().known() || !x->type().known() || !x->shape().is_static()) continue;
      if (n->is(ir::kVulkanDomain, "et_vk.rms_norm.default")) {
        n->output(0)->set_type(x->type());
        changed = true;
      } else if (contrib(n, "MatMulNBits") && x->shape().rank() >= 1 && n->attr_int("N", 0) > 0) {
        auto sizes = x->shape().sizes();  // [..., K] x [K, N] (pre-quantized, lowered later)
        sizes.back() = n->attr_int("N", 0);
        n->output(0)->set_type({x->dtype(), ir::Shape::of(sizes)});
        changed = true;
      }
    }
  }
}

}  // namespace

void expand_microsoft_ops(ir::Graph& g, PassContext& ctx) {
  for (ir::Node* n : g.nodes()) {
    if (n->num_inputs() == 0 || !n->input(0)) continue;
    const ir::TensorType t = type_or(n->output(0), n->input(0));
    if (contrib(n, "Gelu")) {
      finish(g, n, onnx_op(g, n, "Gelu", {n->input(0)}, t, {{"approximate", std::string("none")}}, 20));
    } else if (contrib(n, "FastGelu") || contrib(n, "BiasGelu")) {
      ir::Value* x = n->input(0);
      if (n->num_inputs() > 1 && n->input(1)) x = onnx_op(g, n, "Add", {x, n->input(1)}, t);
      const std::string approx = contrib(n, "FastGelu") ? "tanh" : "none";
      finish(g, n, onnx_op(g, n, "Gelu", {x}, t, {{"approximate", approx}}, 20));
    } else if (contrib(n, "BiasAdd") && n->num_inputs() == 3) {
      finish(g, n, onnx_op(g, n, "Add", {onnx_op(g, n, "Add", {n->input(0), n->input(1)}, t), n->input(2)}, t));
    } else if (contrib(n, "BiasSplitGelu")) {
      if (ir::Value* y = bias_split_gelu(g, n)) finish(g, n, y);
    } else if (contrib(n, "GemmFastGelu") && n->num_inputs() >= 2) {
      const ir::TensorType mt = n->output(0)->type();  // unknown until propagate_shapes when ONNX's inference stopped
      ir::Value* y = onnx_op(g, n, "MatMul", {n->input(0), n->input(1)}, mt, {}, 13);
      if (n->num_inputs() > 2 && n->input(2)) y = onnx_op(g, n, "Add", {y, n->input(2)}, mt);
      finish(g, n, onnx_op(g, n, "Gelu", {y}, mt, {{"approximate", std::string("tanh")}}, 20));
    } else if (contrib(n, "QuickGelu")) {
      std::vector<uint8_t> bytes(4);
      const float alpha = static_cast<float>(n->attr_float("alpha", 1.702));
      std::memcpy(bytes.data(), &alpha, 4);
      ir::Value* a = g.add_constant(g.unique_name(n->name() + "_alpha"), {ir::DType::Float32, ir::Shape::of({})},
                                    ir::TensorData::owned(std::move(bytes)));
      ir::Value* gate = onnx_op(g, n, "Sigmoid", {onnx_op(g, n, "Mul", {n->input(0), a}, t)}, t);
      finish(g, n, onnx_op(g, n, "Mul", {n->input(0), gate}, t));
    } else if (contrib(n, "EmbedLayerNormalization") && unread(g, n, 1, 2)) {  // mask index unread
      if (ir::Value* y = embed_layer_norm(g, n)) finish(g, n, y);
    } else if (contrib(n, "SkipLayerNormalization") && unread(g, n, 1, 3)) {  // mean / inverse std unread
      ir::Value* s = skip_sum(g, n, 4);
      std::vector<ir::Value*> ins = {s, n->input(2)};
      if (n->num_inputs() > 3 && n->input(3)) ins.push_back(n->input(3));
      finish(g, n, onnx_op(g, n, "LayerNormalization", ins, t,
                           {{"axis", int64_t{-1}}, {"epsilon", n->attr_float("epsilon", 1e-12)}}));
    } else if ((contrib(n, "SimplifiedLayerNormalization") || n->is_onnx("SimplifiedLayerNormalization")) &&
               last_axis(n) && unread(g, n, 1, 2)) {
      ir::Node* r = g.add_node(ir::kVulkanDomain, "et_vk.rms_norm.default", {n->input(0), n->input(1)}, {t},
                               g.unique_name(n->name() + "_rms"), n);
      r->attrs() = {{"eps", n->attr_float("epsilon", 1e-5)}};
      finish(g, n, r->output(0));
    } else if (contrib(n, "GatherBlockQuantized")) {
      std::string why;
      if (ir::Value* y = quant::expand_gather_block_quantized(g, n, why)) finish(g, n, y);
      else ctx.not_lowered[n->name()] = why;
    } else if (contrib(n, "SkipSimplifiedLayerNormalization") && unread(g, n, 1, 3)) {
      ir::Value* s = skip_sum(g, n, 3);
      ir::Node* r = g.add_node(ir::kVulkanDomain, "et_vk.rms_norm.default", {s, n->input(2)}, {t},
                               g.unique_name(n->name() + "_rms"), n);
      r->attrs() = {{"eps", n->attr_float("epsilon", 1e-5)}};
      finish(g, n, r->output(0));
    }
  }
  // GroupQueryAttention, RotaryEmbedding and FusedMatMul read the shapes of their inputs, which ONNX's inference
  // could not give past the contrib operators: each layer's once the layers before it are rewritten
  // and typed.
  const auto attention = [](const ir::Node* n) {
    return contrib(n, "GroupQueryAttention") || contrib(n, "RotaryEmbedding") || contrib(n, "FusedMatMul") ||
           contrib(n, "Attention") || contrib(n, "MultiHeadAttention");
  };
  bool expanded = false;
  bool computed_tables = false;  // rotary tables that are not constants (LongRoPE's choice by length)
  for (const ir::Node* n : g.nodes()) {
    expanded = expanded || attention(n);
    const size_t table = contrib(n, "GroupQueryAttention") ? 7 : 2;
    const ir::Value* t = attention(n) && n->num_inputs() > table ? n->input(table) : nullptr;
    const ir::Node* choice = t ? t->producer() : nullptr;
    const bool chosen = choice && choice->is(ir::kVkcDomain, "IfSelect") && ctx.max_seq_len > 0 && !ctx.sizes_resize;
    if (t && !t->is_constant() && !chosen) computed_tables = true;
  }
  if (computed_tables && ctx.max_seq_len > 0)
    ctx.notes.push_back(fmt::format(
        "--max-seq-len: the rotary tables are computed in the graph (as LongRoPE exports choose their short or long "
        "tables by the total length): they are computed for a total length of {}, the cache's, at every step",
        ctx.max_seq_len));
  size_t count = 0;
  while (expanded) {
    expanded = false;
    settle_types(g);
    for (ir::Node* n : g.nodes()) {
      if (contrib(n, "RotaryEmbedding") && expand_rotary_embedding(g, n)) expanded = true;
      if (contrib(n, "FusedMatMul") && n->num_inputs() == 2)
        if (ir::Value* y = fused_matmul(g, n)) finish(g, n, y), expanded = true;
      if (contrib(n, "GroupQueryAttention") && expand_group_query_attention(g, n, ctx)) expanded = true, ++count;
      if (contrib(n, "Attention") && expand_attention(g, n)) expanded = true;
      if (contrib(n, "MultiHeadAttention") && expand_multi_head_attention(g, n)) expanded = true;
    }
  }
  if (count > 0 && ctx.max_seq_len > 0)
    ctx.notes.push_back(fmt::format("--max-seq-len: {} GroupQueryAttention node(s) take their positions as past + [0, S) "
                                    "(seqlens_k = past + S - 1: one sequence, no padding)",
                                    count));
}

}  // namespace vkc::passes
