#include "expanded_attention.h"

#include <algorithm>

namespace vkc::passes {

ir::Value* scaled_attention(ExpandBuilder& b, ir::Value* q, ir::Value* k, ir::Value* v,
                            const std::vector<ir::Value*>& masks, double scale, double softcap) {
  const Ints qs = q->shape().sizes(), ks = k->shape().sizes(), vs = v->shape().sizes();
  const int64_t batch = qs[0], heads = qs[1], seq = qs[2], total = ks[2];
  const Ints ss = {batch, heads, seq, total};
  ir::Value* scores = b.f("MatMul", {q, b.transpose(k, {0, 1, 3, 2})}, ss);
  scores = b.f("Mul", {scores, b.scalar(scale)}, ss);
  if (softcap > 0) scores = b.f("Mul", {b.f("Tanh", {b.f("Div", {scores, b.scalar(softcap)}, ss)}, ss), b.scalar(softcap)}, ss);
  ir::Value* mask = nullptr;  // the masks summed first: one additive mask for fuse-attention
  for (ir::Value* m : masks) {
    if (!m) continue;
    if (m->dtype() != b.dt) m = b.f("Cast", {m}, m->shape().sizes(), {{"to", int64_t(b.dt == ir::DType::Float16 ? 10 : 1)}});
    if (!mask) {
      mask = m;
      continue;
    }
    Ints s = mask->shape().sizes();
    const Ints t = m->shape().sizes();
    for (size_t i = 0; i < s.size(); ++i) s[i] = std::max(s[i], t[i]);
    mask = b.f("Add", {mask, m}, s);
  }
  if (mask) scores = b.f("Add", {scores, mask}, ss);
  ir::Value* probs = b.f("Softmax", {scores}, ss, {{"axis", int64_t{-1}}});
  ir::Value* out = b.f("MatMul", {probs, v}, {batch, heads, seq, vs[3]});
  return b.reshape(b.transpose(out, {0, 2, 1, 3}), {batch, seq, heads * vs[3]});
}

std::pair<ir::Value*, ir::Value*> append_past(ExpandBuilder& b, const ir::Node* n, ir::Value* past_key,
                                              ir::Value* past_value, ir::Value* k, ir::Value* v) {
  if ((past_key == nullptr) != (past_value == nullptr)) throw node_error(n, "past_key and past_value come together");
  if (!past_key) return {k, v};
  const Ints pk = past_key->shape().sizes(), pv = past_value->shape().sizes();
  const Ints ks = k->shape().sizes(), vs = v->shape().sizes();
  if (pk.size() != 4 || pv.size() != 4 || pk[0] != ks[0] || pk[1] != ks[1] || pk[3] != ks[3] || pv[0] != vs[0] ||
      pv[1] != vs[1] || pv[3] != vs[3] || pk[2] != pv[2])
    throw node_error(n, "past_key / past_value must be [B, heads, P, head] like this call's keys and values");
  return {b.concat({past_key, k}, 2), b.concat({past_value, v}, 2)};
}

}  // namespace vkc::passes
