// Attention as exporters write it, on rank-4 [B, H, S, D] tensors:
//   MatMul(Guard(Softmax(MatMul(Q*c1, KT*c2) * c3 [+ mask], axis=-1)), V)
// becomes et_vk.sdpa(Q, K, V, mask, scale) with scale = c1 * c2 * c3 (1 when there is none).
// - Each scale is optional, a Mul or Div by a constant scalar, on either side of K's transpose.
// - KT is K with its last two axes swapped, however spelled: a Transpose(0,1,3,2), or the
//   Reshape -> Transpose(0,2,1) -> Reshape that torch.onnx's dynamo exporter writes (found by
//   running the chain on an index tensor, view_chain.h), or one Transpose from another layout
//   (TorchScript's [B, S, H, D] -> [B, H, D, S]), for which K's own transpose is made.
// - Guard is optional: dynamo's Where(IsNaN(p), 0, p), which zeroes rows whose every score was
//   masked. Fused attention gives such rows the mean of V instead; rows of a causal or padding
//   mask always keep at least one position, so for them the two agree.
// - K and V may broadcast over Q's batch and heads (size 1 there): they are Expanded first.
// - fp16 scores and values raised to fp32 by Casts (beside an fp32 mask) fuse in fp16, the result
//   widened back.
#include "../pattern_utils.h"
#include "../view_chain.h"
#include "vkc/passes/passes.h"

namespace vkc::passes {
namespace {

// Peels a Mul/Div by a constant scalar off `v`: returns the operand and multiplies `scale`.
ir::Value* unscale(ir::Graph& g, ir::Value* v, double& scale) {
  for (const char* op : {"Mul", "Div"}) {
    ir::Node* n = sole_producer(g, v, op);
    if (!n) continue;
    for (size_t side : {0u, 1u}) {
      auto c = constant_scalar(n->input(side));
      if (!c || (op[0] == 'D' && side == 0) || *c == 0) continue;
      scale *= op[0] == 'M' ? *c : 1.0 / *c;
      return n->input(1 - side);
    }
  }
  return v;
}

// Peels a Cast between float types (fp16 scores and values raised to fp32 beside an fp32 mask, as
// the legacy exporter writes a model exported in fp16); `cast` is set when one was peeled.
ir::Value* uncast(const ir::Graph& g, ir::Value* v, bool& cast) {
  ir::Node* c = sole_producer(g, v, "Cast");
  if (!c || !ir::is_float(v->dtype()) || !c->input(0)->type().known() || !ir::is_float(c->input(0)->dtype())) return v;
  cast = true;
  return c->input(0);
}

constexpr std::string_view kNotAttention = "not attention";

bool is_rank4(const ir::Value* v) { return v && v->type().known() && v->shape().rank() == 4 && v->shape().is_static(); }

// The value whose last two axes `kt` swaps (through any data-movement chain), or null; `repeat`
// is how many query heads read each of its heads (a grouped-query head repeat inside the chain,
// as the dynamo exporter writes it with batch and heads merged: Unsqueeze -> Expand ->
// Reshape [B*H, L, D] -> Transpose(0,2,1) -> Reshape [B, H, D, L]).
ir::Value* untranspose(const ir::Graph& g, ir::Value* kt, int64_t& repeat) {
  return find_view_source(g, kt, [&](const ir::Value* src, const ViewMap& map) {
    const auto s = src->shape().sizes(), o = map.out_shape();
    if (s.size() != 4 || o.size() != 4 || s[1] == 0 || o[1] % s[1] != 0 ||
        o != std::vector<int64_t>{s[0], o[1], s[3], s[2]})
      return false;
    const int64_t r = o[1] / s[1];
    if (!map.equals([&](const std::vector<int64_t>& i) { return flat_index({i[0], i[1] / r, i[3], i[2]}, s); }))
      return false;
    repeat = r;
    return true;
  });
}

// `x` [B, H, L, D] with each head repeated `r` times in place (head h of the result is x's h / r).
ir::Value* repeat_heads(ir::Graph& g, const ir::Node* at, ir::Value* x, int64_t r) {
  if (r == 1) return x;
  const auto s = x->shape().sizes();
  const std::vector<int64_t> wide{s[0], s[1], r, s[2], s[3]}, out{s[0], s[1] * r, s[2], s[3]};
  ir::Value* u = add_onnx_node(g, at, "Unsqueeze", {x, add_i64_constant(g, g.unique_name(at->name() + "_ax"), {1}, {2})},
                               {x->dtype(), ir::Shape::of({s[0], s[1], 1, s[2], s[3]})});
  ir::Value* e = add_onnx_node(g, at, "Expand", {u, add_i64_constant(g, g.unique_name(at->name() + "_rep"), {5}, wide)},
                               {x->dtype(), ir::Shape::of(wide)});
  return add_onnx_node(g, at, "Reshape", {e, add_i64_constant(g, g.unique_name(at->name() + "_heads"), {4}, out)},
                       {x->dtype(), ir::Shape::of(out)});
}

// Where(IsNaN(p), 0, p) reading `probs`: the Where's output; else `probs` itself.
ir::Value* skip_nan_guard(const ir::Graph& g, ir::Value* probs) {
  auto users = g.users(probs);
  if (users.size() != 2 || g.is_output(probs)) return probs;
  ir::Node* isnan = users[0]->is_onnx("IsNaN") ? users[0] : users[1]->is_onnx("IsNaN") ? users[1] : nullptr;
  ir::Node* where = users[0]->is_onnx("Where") ? users[0] : users[1]->is_onnx("Where") ? users[1] : nullptr;
  if (!isnan || !where || g.users(isnan->output(0)).size() != 1 || g.is_output(isnan->output(0))) return probs;
  auto zero = constant_scalar(where->input(1));
  if (where->input(0) != isnan->output(0) || where->input(2) != probs || !zero || *zero != 0) return probs;
  return where->output(0);
}

// Empty when fused; else why not (kNotAttention: not a softmax over the last axis of rank-4 scores).
std::string fuse_at(ir::Graph& g, ir::Node* softmax, std::string& sdpa_name) {
  const auto& shape = softmax->input(0)->shape();
  const int64_t axis = softmax->attr_int("axis", softmax->opset() >= 13 ? -1 : 1);
  if (shape.rank() != 4 || (axis != -1 && axis != 3)) return std::string(kNotAttention);
  ir::Value* probs = skip_nan_guard(g, softmax->output(0));
  ir::Node* out = sole_user(g, probs, "MatMul");
  if (!out || out->input(0) != probs) return "the softmax's probabilities are not multiplied by V alone (MatMul(probs, V))";
  double scale = 1.0;
  ir::Value* scores = softmax->input(0);
  if (g.users(scores).size() != 1 || g.is_output(scores)) return "the scores are read elsewhere too";
  ir::Value* mask = nullptr;
  if (ir::Node* add = sole_producer(g, scores, "Add")) {
    ir::Node* lhs = add->input(0)->producer();
    const bool left_is_scores =
        lhs && (lhs->is_onnx("MatMul") || lhs->is_onnx("Mul") || lhs->is_onnx("Div") || lhs->is_onnx("Cast"));
    mask = left_is_scores ? add->input(1) : add->input(0);
    scores = left_is_scores ? add->input(0) : add->input(1);
    if (!ir::is_float(mask->dtype())) return "the mask added to the scores is not a float tensor";
  }
  scores = unscale(g, scores, scale);
  bool widened = false;  // fp16 scores and values computed in fp32
  scores = uncast(g, scores, widened);
  scores = unscale(g, scores, scale);
  ir::Node* qk = sole_producer(g, scores, "MatMul");
  if (!qk) return "the scores are not MatMul(Q, K^T) (through scales and casts): something else (e.g. a soft-cap's Tanh) lies between";
  ir::Value* q = unscale(g, qk->input(0), scale);
  ir::Value* kt = unscale(g, qk->input(1), scale);
  int64_t k_repeat = 1;
  ir::Value* k = untranspose(g, kt, k_repeat);
  // Else KT = Transpose(x, perm) straight from the heads' layout (TorchScript's [B, S, H, D] ->
  // [B, H, D, S]): K is x under perm with its last two axes swapped, made below once all matched.
  ir::Value* k_src = nullptr;
  std::vector<int64_t> k_perm;
  if (k) {
    k = unscale(g, k, scale);
    k = repeat_heads(g, out, k, k_repeat);
  } else {
    ir::Node* t = sole_producer(g, kt, "Transpose");
    if (!t || !is_rank4(kt)) return "K's transpose is neither a swap of its last two axes nor one Transpose of a rank-4 tensor";
    const auto perm = t->attr_ints("perm");
    if (perm.size() != 4) return "K's transpose is not of rank 4";
    k_perm = {perm[0], perm[1], perm[3], perm[2]};
    k_src = unscale(g, t->input(0), scale);
    if (!is_rank4(k_src)) return "K before its transpose is not a static rank-4 tensor";
  }
  ir::Value* v = out->input(1);
  if (widened) {
    bool v_cast = false;
    v = uncast(g, v, v_cast);
    if (!v_cast || v->dtype() != q->dtype()) return "the scores are widened from another dtype than V's";
  }
  if (!is_rank4(q) || (k && !is_rank4(k)) || !is_rank4(v)) return "Q, K or V is not a static rank-4 tensor";
  if (q->dtype() != ir::DType::Float32 && q->dtype() != ir::DType::Float16) return "Q is neither fp32 nor fp16";
  if (widened && mask && mask->dtype() != q->dtype()) {  // the runtime takes the mask in q's dtype
    if (auto values = constant_floats(mask))
      mask = add_float_constant(g, g.unique_name(mask->name() + "_narrow"), mask->shape().sizes(), *values, q->dtype());
    else
      mask = add_onnx_node(g, out, "Cast", {mask}, {q->dtype(), mask->shape()},
                           {{"to", static_cast<int64_t>(q->dtype() == ir::DType::Float16 ? 10 : 1)}});
  }
  // MatMul broadcasts K and V over Q's batch and heads (multi-query attention: one K/V head for
  // all, as Falcon's export leaves it); et_vk.sdpa takes them whole, so a broadcast is expanded.
  const auto qs = q->shape().sizes(), ktsz = kt->shape().sizes(), vs = v->shape().sizes();
  for (int i = 0; i < 2; ++i)
    if ((ktsz[i] != qs[i] && ktsz[i] != 1) || (vs[i] != qs[i] && vs[i] != 1)) return "K or V does not broadcast over Q's batch and heads";
  auto expanded = [&](ir::Value* x) {
    const auto xs = x->shape().sizes();
    if (xs[0] == qs[0] && xs[1] == qs[1]) return x;
    const std::vector<int64_t> to{qs[0], qs[1], xs[2], xs[3]};
    return add_onnx_node(g, out, "Expand", {x, add_i64_constant(g, g.unique_name(out->name() + "_bcast"), {4}, to)},
                         {x->dtype(), ir::Shape::of(to)});
  };
  v = expanded(v);
  if (k_src) {
    const auto ks = kt->shape().sizes();
    ir::Node* t = g.add_node(ir::kOnnxDomain, "Transpose", {k_src}, {{kt->dtype(), ir::Shape::of({ks[0], ks[1], ks[3], ks[2]})}},
                             g.unique_name(qk->name() + "_k"), out);
    t->attrs() = {{"perm", k_perm}};
    t->set_opset(13);
    k = t->output(0);
  }
  k = expanded(k);
  if (widened) {  // the attention runs in q's dtype; its result is widened as the graph's was
    const ir::TensorType wide = out->output(0)->type();
    ir::Node* sdpa = g.add_node(ir::kVulkanDomain, "et_vk.sdpa.default", {q, k, v, mask},
                                {{q->dtype(), wide.shape}}, g.unique_name(out->name() + "_sdpa"), out);
    sdpa->attrs() = {{"scale", scale}};
    const int64_t to = wide.dtype == ir::DType::Float64 ? 11 : wide.dtype == ir::DType::Float16 ? 10 : 1;
    sdpa_name = sdpa->name();
    out->morph(ir::kOnnxDomain, "Cast", {sdpa->output(0)}, {{"to", to}});
    out->set_opset(13);
    return {};
  }
  sdpa_name = out->name();
  out->morph(ir::kVulkanDomain, "et_vk.sdpa.default", mask ? std::vector<ir::Value*>{q, k, v, mask}
                                                           : std::vector<ir::Value*>{q, k, v, nullptr},
             {{"scale", scale}});
  return {};
}

}  // namespace

void fuse_attention(ir::Graph& g, PassContext& ctx) {
  bool fused = false;
  for (ir::Node* n : g.nodes()) {
    if (!n->is_onnx("Softmax")) continue;
    const std::string name = n->name();
    std::string sdpa;
    const std::string why = fuse_at(g, n, sdpa);
    if (why == kNotAttention) continue;
    fused = fused || why.empty();
    ctx.attention.push_back({name, sdpa, why.empty() ? "sdpa" : "unfused", why});
  }
  // The scores, softmax, guard and K's transpose are now unused.
  if (fused) eliminate_dead_code(g, ctx);
}

}  // namespace vkc::passes
