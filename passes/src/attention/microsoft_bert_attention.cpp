// The fused attention operators onnxruntime's transformer optimizer writes (BERT-, ViT-, GPT-2- and
// UNet-style models), rewritten as the attention exporters write, which fuse-attention and the
// cache passes then handle:
//
// Attention(input [B, S, Din], weights [Din, Wq + Wk + Wv], bias [Wq + Wk + Wv], mask_index, past
//           [2, B, N, P, H], attention_bias [B|1, N|1, S, P+S]); attributes num_heads,
//           qkv_hidden_sizes (equal thirds by default), unidirectional, scale (1/sqrt(q head) by
//           default), mask_filter_value (-10000); outputs output [B, S, Wv] and present
//           [2, B, N, P+S, H] (past's keys and values, then this call's).
// MultiHeadAttention(query [B, S, D], key [B, L, D] or [B, N, L, H] (keys computed once, as a
//           cross-attention cache), value likewise, bias [D + D + Dv] (3-D query, key and value),
//           key_padding_mask, attention_bias, past_key / past_value [B, N, P, H]); or the packed
//           forms: query [B, S, N, 3, H] (Q, K, V) or key [B, L, N, 2, H] (K, V); attributes
//           num_heads, unidirectional, scale, mask_filter_value; outputs output, present_key,
//           present_value [B, N, P+L, H].
//
// Masks as onnxruntime's CPU kernels read them: a key-padding mask [B] (valid length: keys at or
// past it hidden), [2B] (also keys before a start hidden), raw [B, T] or [B, S, T] (0 hides),
// [1, 1] or [B, 1] (a dummy: none); a hidden key gets mask_filter_value added to its score, and
// with unidirectional the keys past each query's position (P + i) get it added too. The scores
// are Q K^T * scale + masks + attention_bias, softmaxed over the keys, times V.
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <tuple>

#include "expand_builder.h"
#include "expanded_attention.h"
#include "microsoft_attention.h"

namespace vkc::passes {
namespace {

struct Heads {
  int64_t batch, seq, keys, past, heads, qk, v;  // keys: this call's key count (L, or S)
};

// x [B, L, N*h] as [B, N, L, h].
ir::Value* heads_first(ExpandBuilder& b, ir::Value* x, int64_t n, int64_t h) {
  const Ints s = x->shape().sizes();
  return b.transpose(b.reshape(x, {s[0], s[1], n, h}), {0, 2, 1, 3});
}

// Integer `v` as float32, computed in float where it comes from integer casts and sums (the mask
// lengths onnxruntime's optimizer writes as ReduceSum(Cast(attention_mask, int32)), which a GPU
// runs only in float; exact while the counts stay below 2^24).
ir::Value* float_view(ExpandBuilder& b, ir::Value* v) {
  if (v->dtype() == ir::DType::Float32) return v;
  const ir::Node* p = v->producer();
  const auto integral = [](const ir::Value* x) { return x->type().known() && !ir::is_float(x->dtype()); };
  if (p && integral(v) && p->is_onnx("Cast") && integral(p->input(0))) return float_view(b, p->input(0));
  if (p && integral(v) && p->is_onnx("ReduceSum") && v->type().known() && v->shape().is_static() && integral(p->input(0))) {
    std::vector<ir::Value*> ins = {float_view(b, p->input(0))};
    if (p->num_inputs() > 1 && p->input(1)) ins.push_back(p->input(1));
    ir::AttributeMap attrs = p->attrs();
    if (auto axes = attrs.find("axes"); axes != attrs.end()) {  // opset < 13: axes an attribute, here an input
      const Ints a = p->attr_ints("axes");
      ins.push_back(b.ints({int64_t(a.size())}, a));
      attrs.erase(axes);
    }
    return b.op("ReduceSum", std::move(ins), ir::DType::Float32, v->shape().sizes(), std::move(attrs));
  }
  return b.op("Cast", {v}, ir::DType::Float32, v->shape().sizes(), {{"to", int64_t{1}}});
}

// The additive mask [B, 1, S|1, T] of key-padding `mask` for `h` (null when none or a dummy);
// throws for a shape onnxruntime does not define.
ir::Value* padding_bias(ExpandBuilder& b, const ir::Node* n, ir::Value* mask, const Heads& h, double filter) {
  if (!mask) return nullptr;
  if (!static_value(mask)) throw node_error(n, "the mask's shape is not static");
  const Ints ms = mask->shape().sizes();
  const int64_t total = h.past + h.keys;
  ir::Value* hidden = nullptr;
  Ints shape;
  const auto as_float = [&](ir::Value* m) { return float_view(b, m); };
  if (ms.size() == 2 && ms[1] == 1 && (ms[0] == 1 || ms[0] == h.batch) && total != 1) {
    return nullptr;  // onnxruntime's dummy mask: the same as none
  } else if (ms.size() == 2 || ms.size() == 3) {  // raw: 0 hides the key
    if (ms.size() == 2 && ms != Ints{h.batch, total}) throw node_error(n, "a 2-D mask must be [batch, total length]");
    if (ms.size() == 3 && ms != Ints{h.batch, h.seq, total}) throw node_error(n, "a 3-D mask must be [batch, length, total length]");
    shape = ms.size() == 2 ? Ints{h.batch, 1, 1, total} : Ints{h.batch, 1, h.seq, total};
    ir::Value* m = b.op("Reshape", {as_float(mask), b.ints({4}, shape)}, ir::DType::Float32, shape);
    hidden = b.op("LessOrEqual", {m, add_float_constant(b.g, b.g.unique_name(n->name() + "_zero"), {}, {0.f}, ir::DType::Float32)},
                  ir::DType::Bool, shape);
  } else if (ms.size() == 1 && (ms[0] == h.batch || ms[0] == 2 * h.batch)) {  // end (and start) positions
    Ints keys(total);
    for (int64_t j = 0; j < total; ++j) keys[j] = j;
    std::vector<float> jf(keys.begin(), keys.end());
    ir::Value* j = add_float_constant(b.g, b.g.unique_name(n->name() + "_keys"), {total}, jf, ir::DType::Float32);
    ir::Value* bounds = b.op("Reshape", {as_float(mask), b.ints({2}, {ms[0], 1})}, ir::DType::Float32, {ms[0], 1});
    const auto rows = [&](int64_t first) {
      return b.op("Slice", {bounds, b.ints({1}, {first}), b.ints({1}, {first + h.batch}), b.ints({1}, {0})},
                  ir::DType::Float32, {h.batch, 1});
    };
    shape = {h.batch, 1, 1, total};
    hidden = b.op("GreaterOrEqual", {j, rows(0)}, ir::DType::Bool, {h.batch, total});
    if (ms[0] == 2 * h.batch)
      hidden = b.op("Or", {hidden, b.op("Less", {j, rows(h.batch)}, ir::DType::Bool, {h.batch, total})}, ir::DType::Bool,
                    {h.batch, total});
    hidden = b.op("Reshape", {hidden, b.ints({4}, shape)}, ir::DType::Bool, shape);
  } else {
    throw node_error(n, fmt::format("a mask of shape [{}] is not supported (onnxruntime's CPU kernels read [B], [2B], "
                                    "[B, T] and [B, S, T])",
                                    fmt::join(ms, ", ")));
  }
  return b.f("Where", {hidden, b.scalar(filter), b.scalar(0.0)}, shape);
}

// filter where key j is past query i's position (j > past + i), else 0: [1, 1, S, T].
ir::Value* causal_bias(ExpandBuilder& b, const Heads& h, double filter) {
  const int64_t total = h.past + h.keys;
  std::vector<float> v(static_cast<size_t>(h.seq * total), 0.f);
  for (int64_t i = 0; i < h.seq; ++i)
    for (int64_t j = h.past + i + 1; j < total; ++j) v[static_cast<size_t>(i * total + j)] = float(filter);
  return add_float_constant(b.g, b.g.unique_name(b.at->name() + "_causal"), {1, 1, h.seq, total}, v, b.dt);
}

// attention_bias, checked to broadcast to [B, N, S, T].
ir::Value* attention_bias(const ir::Node* n, ir::Value* bias, const Heads& h) {
  if (!bias) return nullptr;
  const Ints want = {h.batch, h.heads, h.seq, h.past + h.keys};
  if (!static_value(bias) || bias->shape().rank() != 4) throw node_error(n, "attention_bias must be a static 4-D tensor");
  const Ints s = bias->shape().sizes();
  for (size_t i = 0; i < 4; ++i)
    if (s[i] != want[i] && !(i < 2 && s[i] == 1)) throw node_error(n, "attention_bias must be [B or 1, N or 1, S, total length]");
  return bias;
}

// The additive masks of node `n`: its key-padding mask (input `mask_input`), the causal mask when
// unidirectional, its attention_bias (input 5); null where absent.
std::vector<ir::Value*> masks_of(ExpandBuilder& b, const ir::Node* n, size_t mask_input, const Heads& h) {
  const double filter = n->attr_float("mask_filter_value", -10000.0);
  std::vector<ir::Value*> masks = {padding_bias(b, n, input_at(n, mask_input), h, filter)};
  if (n->attr_int("unidirectional", 0) && h.seq > 1) masks.push_back(causal_bias(b, h, filter));
  masks.push_back(attention_bias(n, input_at(n, 5), h));
  return masks;
}

double scale_of(const ir::Node* n, int64_t head) {
  const double s = n->attr_float("scale", 0.0);
  return s != 0.0 ? s : 1.0 / std::sqrt(double(head));
}

// x[..., index, :] of a packed [B, L, N, K, h] tensor, as [B, N, L, h].
ir::Value* unpack(ExpandBuilder& b, ir::Value* x, int64_t index) {
  const Ints s = x->shape().sizes();
  ir::Value* one = b.f("Gather", {x, b.ints({}, {index})}, {s[0], s[1], s[2], s[4]}, {{"axis", int64_t{3}}});
  return b.transpose(one, {0, 2, 1, 3});
}

}  // namespace

bool expand_attention(ir::Graph& g, ir::Node* n) {
  ir::Value* x = input_at(n, 0);
  ir::Value* w = input_at(n, 1);
  ir::Value* bias = input_at(n, 2);
  ir::Value* past = input_at(n, 4);
  if (!static_value(x) || !static_value(w) || (bias && !static_value(bias)) || (past && !static_value(past))) return false;
  if (input_at(n, 6)) throw node_error(n, "past_sequence_length (past and present in one buffer) is not supported");
  if (n->attr_int("past_present_share_buffer", 0)) throw node_error(n, "past_present_share_buffer is not supported");
  if (n->attr_int("do_rotary", 0)) throw node_error(n, "do_rotary is not supported");
  if (!ir::is_float(x->dtype()) || x->shape().rank() != 3) throw node_error(n, "the input must be a float [B, S, hidden] tensor");
  const Ints xs = x->shape().sizes(), ws = w->shape().sizes();
  const int64_t heads = n->attr_int("num_heads", 0);
  Ints sizes = n->attr_ints("qkv_hidden_sizes");
  if (ws.size() != 2 || ws[0] != xs[2]) throw node_error(n, "the weights must be [input hidden, Q + K + V hidden]");
  if (sizes.empty()) sizes = {ws[1] / 3, ws[1] / 3, ws[1] / 3};
  if (sizes.size() != 3 || sizes[0] + sizes[1] + sizes[2] != ws[1] || sizes[0] != sizes[1])
    throw node_error(n, "qkv_hidden_sizes must be three sizes (Q and K equal) adding up to the weights' width");
  if (heads <= 0 || sizes[0] % heads != 0 || sizes[2] % heads != 0) throw node_error(n, "the hidden sizes do not split into num_heads heads");
  if (bias && bias->shape().sizes() != Ints{ws[1]}) throw node_error(n, "the bias must be [Q + K + V hidden]");
  const int64_t past_len = past ? past->shape().sizes()[3] : 0;
  Heads h{xs[0], xs[1], xs[1], past_len, heads, sizes[0] / heads, sizes[2] / heads};
  if (past && (past->shape().sizes() != Ints{2, h.batch, heads, past_len, h.v} || h.qk != h.v))
    throw node_error(n, "past must be [2, B, num_heads, P, head size]");

  ExpandBuilder b{g, n, x->dtype()};
  ir::Value* qkv = b.f("MatMul", {x, w}, {h.batch, h.seq, ws[1]});
  if (bias) qkv = b.f("Add", {qkv, bias}, {h.batch, h.seq, ws[1]});
  ir::Value* q = heads_first(b, b.slice_last(qkv, 0, sizes[0]), heads, h.qk);
  ir::Value* k = heads_first(b, b.slice_last(qkv, sizes[0], 2 * sizes[0]), heads, h.qk);
  ir::Value* v = heads_first(b, b.slice_last(qkv, 2 * sizes[0], ws[1]), heads, h.v);
  ir::Value* present = nullptr;
  if (past) {
    const auto half = [&](int64_t i) {
      return b.f("Gather", {past, b.ints({}, {i})}, {h.batch, heads, past_len, h.v}, {{"axis", int64_t{0}}});
    };
    std::tie(k, v) = append_past(b, n, half(0), half(1), k, v);
  }
  if (n->outputs().size() > 1 && n->output(1)) {
    const Ints one = {1, h.batch, heads, past_len + h.keys, h.v};
    const auto lift = [&](ir::Value* t) { return b.f("Unsqueeze", {t, b.ints({1}, {0})}, one); };
    present = b.concat({lift(k), lift(v)}, 0);
  }
  replace_outputs(g, n, {scaled_attention(b, q, k, v, masks_of(b, n, 3, h), scale_of(n, h.qk)), present});
  return true;
}

bool expand_multi_head_attention(ir::Graph& g, ir::Node* n) {
  ir::Value* query = input_at(n, 0);
  ir::Value* key = input_at(n, 1);
  ir::Value* value = input_at(n, 2);
  ir::Value* bias = input_at(n, 3);
  ir::Value* past_key = input_at(n, 6);
  ir::Value* past_value = input_at(n, 7);
  for (ir::Value* v : {query, key, value, bias, past_key, past_value})
    if (v && !static_value(v)) return false;
  if (!query) return false;
  if (input_at(n, 8) || input_at(n, 9)) throw node_error(n, "past_sequence_length and cache_indirection are not supported");
  if (!ir::is_float(query->dtype())) throw node_error(n, "the query must be a float tensor");
  const int64_t heads = n->attr_int("num_heads", 0);
  if (heads <= 0) throw node_error(n, "num_heads must be positive");
  const Ints qs = query->shape().sizes();
  ExpandBuilder b{g, n, query->dtype()};
  ir::Value *q = nullptr, *k = nullptr, *v = nullptr;
  if (qs.size() == 5) {  // packed Q, K, V: [B, S, N, 3, H]
    if (key || value || bias || qs[2] != heads || qs[3] != 3) throw node_error(n, "a packed query must be [B, S, num_heads, 3, head] alone");
    q = unpack(b, query, 0), k = unpack(b, query, 1), v = unpack(b, query, 2);
  } else {
    if (qs.size() != 3 || qs[2] % heads != 0) throw node_error(n, "the query must be [B, S, num_heads * head]");
    const int64_t d = qs[2];
    ir::Value* qb = query;
    if (bias) {
      const Ints bs = bias->shape().sizes();
      if (bs.size() != 1 || bs[0] < 2 * d) throw node_error(n, "the bias must be [D + D + Dv]");
      qb = b.f("Add", {query, b.slice_last(bias, 0, d)}, qs);
    }
    q = heads_first(b, qb, heads, d / heads);
    if (!key) throw node_error(n, "key is missing");
    const Ints ks = key->shape().sizes();
    if (ks.size() == 5) {  // packed K, V: [B, L, N, 2, H]
      if (value || bias || ks[2] != heads || ks[3] != 2) throw node_error(n, "a packed key must be [B, L, num_heads, 2, head], value absent");
      k = unpack(b, key, 0), v = unpack(b, key, 1);
    } else if (ks.size() == 4) {  // per-head keys and values, computed once (a cross-attention cache)
      if (!value || value->shape().rank() != 4 || bias || past_key) throw node_error(n, "per-head key and value [B, N, L, H] come together, without bias or past");
      k = key, v = value;  // per head already: used as they are
    } else {
      if (!value || ks.size() != 3 || value->shape().rank() != 3 || ks[2] != d) throw node_error(n, "key and value must be [B, L, D] and [B, L, Dv]");
      ir::Value *kb = key, *vb = value;
      const int64_t dv = value->shape().sizes()[2];
      if (bias) {
        if (bias->shape().sizes()[0] != 2 * d + dv) throw node_error(n, "the bias must be [D + D + Dv]");
        kb = b.f("Add", {key, b.slice_last(bias, d, 2 * d)}, ks);
        vb = b.f("Add", {value, b.slice_last(bias, 2 * d, 2 * d + dv)}, value->shape().sizes());
      }
      if (dv % heads != 0) throw node_error(n, "the value width does not split into heads");
      k = heads_first(b, kb, heads, d / heads);
      v = heads_first(b, vb, heads, dv / heads);
    }
  }
  const Ints q4 = q->shape().sizes(), k4 = k->shape().sizes(), v4 = v->shape().sizes();
  if (k4[0] != q4[0] || k4[1] != heads || k4[3] != q4[3] || v4[0] != q4[0] || v4[1] != heads || v4[2] != k4[2])
    throw node_error(n, "query, key and value do not agree on batch, heads and lengths");
  const int64_t past_len = past_key ? past_key->shape().sizes()[2] : 0;
  Heads h{q4[0], q4[2], k4[2], past_len, heads, q4[3], v4[3]};
  std::tie(k, v) = append_past(b, n, past_key, past_value, k, v);
  replace_outputs(g, n, {scaled_attention(b, q, k, v, masks_of(b, n, 4, h), scale_of(n, h.qk)), k, v});
  return true;
}

}  // namespace vkc::passes
