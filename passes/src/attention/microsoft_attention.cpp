// GroupQueryAttention(query, key, value, past_key, past_value, seqlens_k, total_sequence_length,
//                     cos_cache, sin_cache, position_ids, attention_bias, head_sink)
// with attributes num_heads, kv_num_heads, scale, softcap, local_window_size, do_rotary,
// rotary_interleaved, qk_norm_epsilon (q_norm_weight and k_norm_weight: inputs 14 and 15), computed as
// onnxruntime defines it for past and present in separate buffers:
//   Q [B, S, Hq*D], K and V [B, S, Hkv*D] (or Q, K and V packed in the query, key and value absent);
//   one sequence (B = 1: onnxruntime numbers a padded batch's prompts otherwise);
//   with q/k norm weights [D], each head of Q and K RMS-normalized first (QK-norm, before RoPE);
//   positions p[i] = seqlens_k + 1 - S + i (the last token sits at seqlens_k), or position_ids
//   when given; with do_rotary, Q and K rotated by the rows p of cos_cache /
//   sin_cache [max, R/2] (R <= D: the first R channels; halves, or pairs when interleaved);
//   present_key = Concat(past_key, K, axis 2) [B, Hkv, P+S, D], present_value likewise;
//   query i sees keys j <= p[i] (and j > p[i] - local_window_size when that is positive: under
//   --max-seq-len a window shorter than the cache makes use-kv-cache keep the cache as state); scores scaled (1/sqrt(D) by default), soft-capped (softcap * tanh(x / softcap))
//   when softcap > 0, plus attention_bias, softmax, times V; heads h read KV head h / (Hq / Hkv).
// Under --max-seq-len the program keeps one sequence without padding (assume-unpadded-mask), so
// seqlens_k is past + S - 1: the positions are written as Range(past, past + S) from past_key's
// length, which keep-cache-positions makes follow input_pos.
#include "microsoft_attention.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>

#include "../constants.h"
#include "expand_builder.h"
#include "expanded_attention.h"

namespace vkc::passes {
namespace {

// x [B, H, S, D] rotated by cos / sin [B, 1, S, R/2] (RoPE over the first R channels).
ir::Value* rotate(ExpandBuilder& b, ir::Value* x, ir::Value* cos, ir::Value* sin, int64_t r, bool interleaved) {
  const Ints s = x->shape().sizes();
  const int64_t d = s[3];
  ir::Value* xr = r < d ? b.slice_last(x, 0, r) : x;
  Ints sr = s;
  sr[3] = r;
  ir::Value* rotated = nullptr;
  if (!interleaved) {  // HF rotate_half: x * cos + Concat(-x2, x1) * sin with the tables doubled
    ir::Value* c = b.concat({cos, cos}, -1);
    ir::Value* sn = b.concat({sin, sin}, -1);
    ir::Value* x1 = b.slice_last(xr, 0, r / 2);
    ir::Value* x2 = b.slice_last(xr, r / 2, r);
    ir::Value* half = b.concat({b.f("Neg", {x2}, x2->shape().sizes()), x1}, -1);
    rotated = b.f("Add", {b.f("Mul", {xr, c}, sr), b.f("Mul", {half, sn}, sr)}, sr);
  } else {  // pairs (x[2i], x[2i+1]) as complex numbers times (cos + i sin)
    Ints s5 = {s[0], s[1], s[2], r / 2, 2};
    ir::Value* x5 = b.reshape(xr, s5);
    Ints s4 = {s[0], s[1], s[2], r / 2};
    ir::Value* zero = b.ints({}, {0});
    ir::Value* one = b.ints({}, {1});
    ir::Value* re = b.f("Gather", {x5, zero}, s4, {{"axis", int64_t{-1}}});
    ir::Value* im = b.f("Gather", {x5, one}, s4, {{"axis", int64_t{-1}}});
    ir::Value* out_re = b.f("Sub", {b.f("Mul", {re, cos}, s4), b.f("Mul", {im, sin}, s4)}, s4);
    ir::Value* out_im = b.f("Add", {b.f("Mul", {re, sin}, s4), b.f("Mul", {im, cos}, s4)}, s4);
    Ints s41 = s4;
    s41.push_back(1);
    ir::Value* axis = b.ints({1}, {-1});
    rotated = b.reshape(b.concat({b.f("Unsqueeze", {out_re, axis}, s41), b.f("Unsqueeze", {out_im, axis}, s41)}, -1), sr);
  }
  return r < d ? b.concat({rotated, b.slice_last(x, r, d)}, -1) : rotated;
}

// `table` zero-padded to `rows` rows (a constant [r, W] with r <= rows).
ir::Value* padded_rows(ExpandBuilder& b, const ir::Value* table, int64_t rows) {
  const Ints s = table->shape().sizes();
  if (s[0] == rows) return const_cast<ir::Value*>(table);
  std::vector<uint8_t> bytes(static_cast<size_t>(rows * s[1]) * ir::dtype_size(table->dtype()), 0);
  std::memcpy(bytes.data(), table->data().data(), table->data().size());
  return b.g.add_constant(b.g.unique_name(table->name() + "_padded"), {table->dtype(), ir::Shape::of({rows, s[1]})},
                          ir::TensorData::owned(std::move(bytes)));
}

// Rows `pos` [B, S] (int64) of a rotary table [max, R/2], as [B, 1, S, R/2] in `b.dt`. A table chosen
// between two constant ones by a condition (vkc.IfSelect: LongRoPE's short and long tables, picked
// by the total length) is read as the choice between the rows of each: Gather(select(c, A, B), pos)
// is select(c, Gather(A, pos), Gather(B, pos)), the shorter one padded so either gather is in range
// (the positions a branch is chosen for are within its rows). The choice then holds whether the
// condition folds or runs (under --max-seq-len it follows the total length at each call).
ir::Value* table_rows(ExpandBuilder& b, ir::Value* table, ir::Value* pos) {
  const Ints ps = pos->shape().sizes();
  const int64_t half = *table->shape().dims[1].value;
  const ir::Node* choice = table->producer();
  if (choice && choice->is(ir::kVkcDomain, "IfSelect") && choice->num_inputs() == 3) {
    const ir::Value *a = choice->input(1), *c = choice->input(2);
    if (a->is_constant() && c->is_constant() && a->dtype() == c->dtype() && a->shape().rank() == 2 &&
        c->shape().rank() == 2 && a->shape().sizes()[1] == half && c->shape().sizes()[1] == half) {
      const int64_t rows = std::max(a->shape().sizes()[0], c->shape().sizes()[0]);
      const Ints rs = {ps[0], ps[1], half};
      ir::Value* ra = b.op("Gather", {padded_rows(b, a, rows), pos}, a->dtype(), rs, {{"axis", int64_t{0}}});
      ir::Value* rc = b.op("Gather", {padded_rows(b, c, rows), pos}, a->dtype(), rs, {{"axis", int64_t{0}}});
      ir::Value* rows_chosen = b.op("Where", {choice->input(0), ra, rc}, a->dtype(), rs);
      if (a->dtype() != b.dt) rows_chosen = b.f("Cast", {rows_chosen}, rs, {{"to", int64_t(b.dt == ir::DType::Float16 ? 10 : 1)}});
      return b.f("Unsqueeze", {rows_chosen, b.ints({1}, {1})}, {ps[0], 1, ps[1], half});
    }
  }
  ir::Value* rows = b.op("Gather", {table, pos}, table->dtype(), {ps[0], ps[1], half}, {{"axis", int64_t{0}}});
  if (table->dtype() != b.dt)
    rows = b.f("Cast", {rows}, {ps[0], ps[1], half}, {{"to", int64_t(b.dt == ir::DType::Float16 ? 10 : 1)}});
  return b.f("Unsqueeze", {rows, b.ints({1}, {1})}, {ps[0], 1, ps[1], half});
}

}  // namespace

bool expand_group_query_attention(ir::Graph& g, ir::Node* n, const PassContext& ctx) {
  ir::Value* query = input_at(n, 0);
  ir::Value* key = input_at(n, 1);
  ir::Value* value = input_at(n, 2);
  ir::Value* past_key = input_at(n, 3);
  ir::Value* past_value = input_at(n, 4);
  ir::Value* seqlens = input_at(n, 5);
  ir::Value* cos_cache = input_at(n, 7);
  ir::Value* sin_cache = input_at(n, 8);
  ir::Value* position_ids = input_at(n, 9);
  ir::Value* bias = input_at(n, 10);
  if (!static_value(query) || (key && !static_value(key)) || (value && !static_value(value)) ||
      (past_key && !static_value(past_key)) || (past_value && !static_value(past_value)))
    return false;
  if (input_at(n, 11)) throw node_error(n, "head_sink is not supported");
  if (input_at(n, 12) || input_at(n, 13)) throw node_error(n, "quantized caches (k_scale, v_scale) are not supported");
  ir::Value* q_norm = input_at(n, 14);
  ir::Value* k_norm = input_at(n, 15);
  if ((q_norm == nullptr) != (k_norm == nullptr)) throw node_error(n, "q_norm_weight and k_norm_weight come together");
  if (n->attr_int("smooth_softmax", 0) != 0) throw node_error(n, "smooth_softmax is not supported");
  if (n->outputs().size() > 3 && n->output(3) && (g.is_output(n->output(3)) || !g.users(n->output(3)).empty()))
    throw node_error(n, "its qk output is read; that output is not supported");
  if (!ir::is_float(query->dtype()) || query->shape().rank() != 3) throw node_error(n, "the query must be a float [B, S, W] tensor");
  const int64_t hq = n->attr_int("num_heads", 0), hkv = n->attr_int("kv_num_heads", 0);
  const Ints qs = query->shape().sizes();
  const int64_t batch = qs[0], seq = qs[1];
  if (batch != 1) throw node_error(n, fmt::format("a batch of {} sequences is not supported: compile one (--dim batch_size=1)", batch));
  if (hq <= 0 || hkv <= 0 || hq % hkv != 0) throw node_error(n, "num_heads must be a positive multiple of kv_num_heads");
  const bool packed = !key;
  const int64_t d = packed ? qs[2] / (hq + 2 * hkv) : qs[2] / hq;
  if (d <= 0 || (packed ? d * (hq + 2 * hkv) : d * hq) != qs[2]) throw node_error(n, "the query width does not split into heads");
  if ((past_key == nullptr) != (past_value == nullptr)) throw node_error(n, "past_key and past_value come together");
  const int64_t past = past_key ? past_key->shape().sizes()[2] : 0;
  const int64_t total = past + seq;
  for (ir::Value* p : {past_key, past_value})  // checked before anything is built (append_past checks them again)
    if (p && p->shape().sizes() != Ints{batch, hkv, past, d}) throw node_error(n, "past_key / past_value must be [B, kv_num_heads, P, head]");
  const ir::Value* present = n->outputs().size() > 1 ? n->output(1) : nullptr;
  if (present && static_value(present) && present->shape().rank() == 4 && seq > 0 && past > 0 &&
      present->shape().sizes()[2] == past)
    throw node_error(n, "its past and present share one buffer (past_present_share_buffer); export them separately");
  const bool rotary = n->attr_int("do_rotary", 0) != 0;
  // The tables' widths must be known; their lengths need not (LongRoPE exports choose between a
  // short and a long pair with an If, whose output's length is then unknown until it folds).
  const auto width = [](const ir::Value* t) -> std::optional<int64_t> {
    if (!t || !t->type().known() || t->shape().rank() != 2 || !t->shape().dims[1].value) return std::nullopt;
    return t->shape().dims[1].value;
  };
  if (rotary && (!width(cos_cache) || width(cos_cache) != width(sin_cache)))
    throw node_error(n, "do_rotary needs cos_cache and sin_cache [max positions, rotary dim / 2]");

  ExpandBuilder b{g, n, query->dtype()};
  if (packed) {
    ir::Value* split = b.ints({3}, {hq * d, hkv * d, hkv * d});
    ir::Node* s = g.add_node(ir::kOnnxDomain, "Split", {query, split},
                             {{b.dt, ir::Shape::of({batch, seq, hq * d})}, {b.dt, ir::Shape::of({batch, seq, hkv * d})},
                              {b.dt, ir::Shape::of({batch, seq, hkv * d})}},
                             g.unique_name(n->name() + "_Split"), n);
    s->attrs() = {{"axis", int64_t{2}}};
    s->set_opset(13);
    query = s->output(0), key = s->output(1), value = s->output(2);
  }
  const auto heads_first = [&](ir::Value* x, int64_t h) { return b.transpose(b.reshape(x, {batch, seq, h, d}), {0, 2, 1, 3}); };
  ir::Value* q = heads_first(query, hq);
  ir::Value* k = heads_first(key, hkv);
  ir::Value* v = heads_first(value, hkv);
  if (q_norm) {  // QK-norm: each head's q and k RMS-normalized over D by one [D] weight, before RoPE
    const double eps = n->attr_float("qk_norm_epsilon", 1e-6);
    const auto rms = [&](ir::Value* x, ir::Value* w) {
      ir::Node* r = g.add_node(ir::kVulkanDomain, "et_vk.rms_norm.default", {x, w}, {x->type()},
                               g.unique_name(n->name() + "_qk_norm"), n);
      r->attrs() = {{"eps", eps}};
      return r->output(0);
    };
    q = rms(q, q_norm);
    k = rms(k, k_norm);
  }

  // Positions [B, S] (int64).
  ir::Value* pos = nullptr;
  if (position_ids) {
    if (!static_value(position_ids) || position_ids->shape().sizes() != Ints{batch, seq}) throw node_error(n, "position_ids must be [B, S]");
    pos = position_ids->dtype() == ir::DType::Int64
              ? position_ids
              : b.op("Cast", {position_ids}, ir::DType::Int64, {batch, seq}, {{"to", int64_t{7}}});
  } else if (ctx.max_seq_len > 0 && batch == 1 && past_key) {
    ir::Value* shape = b.op("Shape", {past_key}, ir::DType::Int64, {4});
    ir::Value* start = b.op("Gather", {shape, b.ints({}, {2})}, ir::DType::Int64, {}, {{"axis", int64_t{0}}});
    ir::Value* limit = b.op("Add", {start, b.ints({}, {seq})}, ir::DType::Int64, {});
    ir::Value* range = b.op("Range", {start, limit, b.ints({}, {1})}, ir::DType::Int64, {seq});
    pos = b.op("Unsqueeze", {range, b.ints({1}, {0})}, ir::DType::Int64, {1, seq});
  } else {
    if (!static_value(seqlens) || seqlens->shape().numel() != batch) throw node_error(n, "seqlens_k must be [B]");
    ir::Value* last = seqlens->dtype() == ir::DType::Int64
                          ? seqlens
                          : b.op("Cast", {seqlens}, ir::DType::Int64, {batch}, {{"to", int64_t{7}}});
    last = b.op("Reshape", {last, b.ints({2}, {batch, 1})}, ir::DType::Int64, {batch, 1});
    Ints steps(seq);
    for (int64_t i = 0; i < seq; ++i) steps[i] = i + 1 - seq;
    pos = b.op("Add", {last, b.ints({1, seq}, steps)}, ir::DType::Int64, {batch, seq});
  }

  if (rotary) {
    const int64_t half = *cos_cache->shape().dims[1].value, r = 2 * half;
    if (r > d) throw node_error(n, "the rotary tables are wider than the head");
    ir::Value* cos = table_rows(b, cos_cache, pos);
    ir::Value* sin = table_rows(b, sin_cache, pos);
    const bool interleaved = n->attr_int("rotary_interleaved", 0) != 0;
    q = rotate(b, q, cos, sin, r, interleaved);
    k = rotate(b, k, cos, sin, r, interleaved);
  }

  const auto [present_k, present_v] = append_past(b, n, past_key, past_value, k, v);
  const int64_t rep = hq / hkv;
  const auto repeat = [&](ir::Value* x) {
    if (rep == 1) return x;
    ir::Value* u = b.f("Unsqueeze", {x, b.ints({1}, {2})}, {batch, hkv, 1, total, d});
    ir::Value* e = b.f("Expand", {u, b.ints({5}, {batch, hkv, rep, total, d})}, {batch, hkv, rep, total, d});
    return b.reshape(e, {batch, hq, total, d});
  };
  ir::Value* kr = repeat(present_k);
  ir::Value* vr = repeat(present_v);

  // Key j is hidden from query i when j > p[i], or j <= p[i] - window (the window holds the
  // current position and the window - 1 before it, as onnxruntime's kernel counts it).
  Ints keys(total);
  for (int64_t j = 0; j < total; ++j) keys[j] = j;
  ir::Value* j = b.ints({total}, keys);
  ir::Value* lim = b.op("Reshape", {pos, b.ints({4}, {batch, 1, seq, 1})}, ir::DType::Int64, {batch, 1, seq, 1});
  const Ints ms = {batch, 1, seq, total};
  ir::Value* hidden = b.op("Greater", {j, lim}, ir::DType::Bool, ms);
  const int64_t w = n->attr_int("local_window_size", -1);
  if (w > 0) {  // under --max-seq-len, a window shorter than the cache makes use-kv-cache keep it as state
    ir::Value* first = b.op("Sub", {lim, b.ints({}, {w - 1})}, ir::DType::Int64, {batch, 1, seq, 1});
    hidden = b.op("Or", {hidden, b.op("Less", {j, first}, ir::DType::Bool, ms)}, ir::DType::Bool, ms);
  }
  const double lowest = b.dt == ir::DType::Float16 ? -65504.0 : double(std::numeric_limits<float>::lowest());
  ir::Value* mask = b.f("Where", {hidden, b.scalar(lowest), b.scalar(0.0)}, ms);
  double scale = n->attr_float("scale", 0.0);
  if (scale == 0.0) scale = 1.0 / std::sqrt(double(d));
  ir::Value* out = scaled_attention(b, q, kr, vr, {mask, bias}, scale, n->attr_float("softcap", 0.0));

  // Graph outputs (the presents of a program that takes and returns its caches) keep their names.
  replace_outputs(g, n, {out, present_k, present_v});
  return true;
}

// RotaryEmbedding(input, position_ids, cos_cache, sin_cache) with attributes interleaved, num_heads
// (for a 3-D input), rotary_embedding_dim (0: the tables' width times 2): the input's heads rotated
// at positions position_ids ([B, S], or a start [1]: start + i).
bool expand_rotary_embedding(ir::Graph& g, ir::Node* n) {
  ir::Value* x = input_at(n, 0);
  ir::Value* position_ids = input_at(n, 1);
  ir::Value* cos_cache = input_at(n, 2);
  ir::Value* sin_cache = input_at(n, 3);
  if (!static_value(x) || !static_value(position_ids) || !static_value(cos_cache) || !static_value(sin_cache)) return false;
  if (!ir::is_float(x->dtype()) || (x->shape().rank() != 3 && x->shape().rank() != 4))
    throw node_error(n, "the input must be a float [B, S, W] or [B, H, S, D] tensor");
  if (n->attr_int("is_packed_batching", 0) != 0) throw node_error(n, "packed batching is not supported");
  if (cos_cache->shape().rank() != 2 || cos_cache->shape().sizes() != sin_cache->shape().sizes())
    throw node_error(n, "cos_cache and sin_cache must be [max positions, rotary dim / 2]");
  const Ints xs = x->shape().sizes();
  const bool three = xs.size() == 3;
  const int64_t batch = xs[0], seq = three ? xs[1] : xs[2];
  int64_t heads = three ? n->attr_int("num_heads", 0) : xs[1];
  const int64_t r_attr = n->attr_int("rotary_embedding_dim", 0);
  if (three && heads <= 0) {  // without num_heads the head size is the tables' width times 2
    const int64_t d = r_attr > 0 ? 0 : 2 * cos_cache->shape().sizes()[1];
    if (d <= 0 || xs[2] % d != 0) throw node_error(n, "a 3-D input needs num_heads");
    heads = xs[2] / d;
  }
  const int64_t d = three ? xs[2] / heads : xs[3];
  if (d <= 0 || (three && d * heads != xs[2])) throw node_error(n, "the input width does not split into heads");
  const int64_t r = r_attr > 0 ? r_attr : 2 * cos_cache->shape().sizes()[1];
  if (r > d || r % 2 != 0 || r / 2 > cos_cache->shape().sizes()[1]) throw node_error(n, "the rotary dim does not fit the head");

  ExpandBuilder b{g, n, x->dtype()};
  ir::Value* pos = position_ids->dtype() == ir::DType::Int64
                       ? position_ids
                       : b.op("Cast", {position_ids}, ir::DType::Int64, position_ids->shape().sizes(), {{"to", int64_t{7}}});
  const Ints ps = pos->shape().sizes();
  if (ps.size() == 1 && ps[0] == 1) {  // a start position: start + i
    Ints steps(seq);
    for (int64_t i = 0; i < seq; ++i) steps[i] = i;
    pos = b.op("Add", {b.op("Reshape", {pos, b.ints({2}, {1, 1})}, ir::DType::Int64, {1, 1}), b.ints({1, seq}, steps)},
               ir::DType::Int64, {1, seq});
  } else if (ps != Ints{batch, seq}) {
    throw node_error(n, "position_ids must be [B, S] or [1]");
  }
  ir::Value* tcos = cos_cache, *tsin = sin_cache;
  if (r / 2 < cos_cache->shape().sizes()[1]) {  // the tables' first R/2 columns
    tcos = b.slice_last(cos_cache, 0, r / 2);
    tsin = b.slice_last(sin_cache, 0, r / 2);
  }
  const int64_t pb = pos->shape().sizes()[0];
  ir::Value* cos = table_rows(b, tcos, pos);
  ir::Value* sin = table_rows(b, tsin, pos);
  if (pb != batch && pb != 1) throw node_error(n, "position_ids' batch differs from the input's");
  ir::Value* x4 = three ? b.transpose(b.reshape(x, {batch, seq, heads, d}), {0, 2, 1, 3}) : x;
  ir::Value* y = rotate(b, x4, cos, sin, r, n->attr_int("interleaved", 0) != 0);
  if (three) y = b.reshape(b.transpose(y, {0, 2, 1, 3}), {batch, seq, heads * d});
  g.replace_all_uses(n->output(0), y);
  g.remove_node(n);
  return true;
}

}  // namespace vkc::passes
