// --max-seq-len N: a decode-step graph with a concat-style KV cache
//   inputs  tokens [1, S], position ids [1, S], past_k_i / past_v_i [1, Hkv, P, D]
//   outputs logits, present_k_i = Concat(past_k_i, k_i, axis 2), present_v_i likewise
// becomes a program that keeps the cache inside itself, the way ET-VK's own Llama export does:
//   inputs  tokens [1, S], input_pos [1] (the position of the first token)
//   outputs logits
// Each fused attention (et_vk.sdpa) whose K and V are the presents, read directly or through a
// grouped-query head repeat, becomes sdpa_with_kv_cache(q, k_i, v_i, k_cache, v_cache, input_pos[0],
// S, is_causal) on [1, S, H, D] tensors; the runtime owns caches of N positions per call and writes
// k_i/v_i at input_pos. The position ids become input_pos + [0, S).
// The importer fixes P to N - S (so the presents hold N positions); what the graph computed from P
// (the causal mask) is read by meaning (attention/mask.h) and dropped. A graph without position ids
// whose positions keep-cache-positions made follow input_pos keeps that input; its mask, computed
// from input_pos, is checked at the positions input_pos may take.
// A cache no sdpa_with_kv_cache takes (its attention in a window shorter than N, or left unfused)
// is kept as state by update_cache (attention/cache_state.h): what reads it runs over all N rows,
// its mask computed from input_pos. Float inputs (an encoder-decoder's encoder output, which
// cross-attention reads) stay as context inputs after tokens and input_pos, the same at every call.
// Anything else that cannot be kept exactly (a mask that is neither causal nor windowed, another
// integer input) fails the compile with the reason.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "../constants.h"
#include "../folding/evaluate.h"
#include "cache_state.h"
#include "kv_cache_pairs.h"
#include "mask.h"
#include "../pattern_utils.h"
#include "../view_chain.h"
#include "vkc/passes/passes.h"

namespace vkc::passes {
namespace {

constexpr std::string_view kCacheOp = "sdpa_with_kv_cache.default";

// The present that `x` ([1, Hq, L, D]) reads, directly or through a head repeat; null if none.
const CachePair* cache_source(const ir::Graph& g, ir::Value* x, const std::map<const ir::Value*, CachePair>& pairs,
                              int64_t& repeat) {
  const ir::Value* found = find_view_source(g, x, [&](const ir::Value* src, const ViewMap& map) {
    const auto& o = map.out_shape();
    if (!pairs.count(src) || o.size() != 4) return false;
    const auto s = src->shape().sizes();
    const int64_t hq = o[1];
    if (s[1] == 0 || hq % s[1] != 0 || o[0] != s[0] || o[2] != s[2] || o[3] != s[3]) return false;
    const int64_t r = hq / s[1];
    // repeat_interleave over heads: output head h reads kv head h / r.
    if (!map.equals([&](const std::vector<int64_t>& i) { return flat_index({i[0], i[1] / r, i[2], i[3]}, s); }))
      return false;
    repeat = r;
    return true;
  });
  return found ? &pairs.at(found) : nullptr;
}

// What an additive mask [.., S or 1, L] means for queries at positions L - S + i (or, computed from
// input_pos, at input_pos + i): causal, causal in a window, or neither (attention/mask.h). A mask
// computed from input_pos is checked at the positions input_pos may take (the masks exporters
// write compare positions elementwise, and each evaluation costs a pass over [S, N]). One token
// per call: every position up to 256 of them; beyond, the first and last 128 and every 61st
// between. S tokens per call: row i at input_pos p is query position p + i, so p = 0, S, 2S, ...
// and the last check every query position once; the first and last 8 and 16 more (every 61st)
// check the mask's use of p itself.
attention::MaskKind mask_kind(const ir::Value* mask, int64_t s, int64_t l, const ir::Value* input_pos) {
  attention::MaskKind kind;
  if (!mask) return kind;
  const auto shape = mask->shape().sizes();
  if (shape.size() < 2 || shape[shape.size() - 1] != l || (shape[shape.size() - 2] != s && shape[shape.size() - 2] != 1)) {
    kind.reason = fmt::format("has shape {}", mask->shape().str());
    return kind;
  }
  const int64_t rows = shape[shape.size() - 2];
  if (constant_floats(mask) || !input_pos) {
    auto values = attention::mask_values(mask, nullptr, 0);
    if (!values) {
      kind.reason = "is computed at run time";
      return kind;
    }
    return attention::classify_mask(*values, rows, l, s, l - s);
  }
  const int64_t last = l - s;  // input_pos takes 0 .. N - S
  for (int64_t p = 0; p <= last; ++p) {
    const bool check = s > 1 ? p % s == 0 || p < 8 || p > last - 8 || (p % 61 == 0 && p < 61 * 16)
                             : last < 256 || p < 128 || p > last - 128 || p % 61 == 0;
    if (!check) continue;
    auto values = attention::mask_values(mask, input_pos, p);
    if (!values) {
      kind.reason = "is computed at run time from more than input_pos";
      return kind;
    }
    // Computed from input_pos, a bias follows the position as the graph computes it.
    attention::MaskKind at = attention::classify_mask(*values, rows, l, s, p, true);
    if (!at.reason.empty() || (at.window && kind.window && at.window != kind.window)) {
      at.reason = fmt::format("{} at input_pos {}", at.reason.empty() ? "changes its window" : at.reason, p);
      return at;
    }
    kind.window = std::max(kind.window, at.window);
    kind.bias = kind.bias || at.bias;
  }
  return kind;
}

// The position ids become input_pos + [0, S).
void replace_positions(ir::Graph& g, ir::Value* positions, ir::Value* input_pos, int64_t seq) {
  ir::Node* first = g.nodes().front();
  ir::Value* pos_col = add_onnx_node(g, first, "Reshape", {input_pos, add_i64_constant(g, g.unique_name("pos_shape"), {2}, {1, 1})},
                                     {ir::DType::Int64, ir::Shape::of({1, 1})});
  std::vector<int64_t> steps(seq);
  for (int64_t i = 0; i < seq; ++i) steps[i] = i;
  ir::Value* pos_ids = add_onnx_node(g, first, "Add", {pos_col, add_i64_constant(g, g.unique_name("pos_steps"), {1, seq}, steps)},
                                     {ir::DType::Int64, ir::Shape::of({1, seq})});
  if (positions->dtype() != ir::DType::Int64)
    pos_ids = add_onnx_node(g, first, "Cast", {pos_ids}, positions->type(),
                            {{"to", static_cast<int64_t>(positions->dtype() == ir::DType::Int32 ? 6 : 7)}});
  g.replace_all_uses(positions, pos_ids);
}

// The embedding lookup's index input: the input read as Gather's indices into a float constant,
// directly or through reshapes (OPT flattens the tokens first) and integer casts (onnxruntime's
// EmbedLayerNormalization takes int32 ids).
bool is_token_input(const ir::Graph& g, const ir::Value* v, int depth = 0) {
  for (const ir::Node* u : g.users(v)) {
    if (u->is_onnx("Gather") && u->input(1) == v && u->input(0)->is_constant() && ir::is_float(u->input(0)->dtype()))
      return true;
    const bool view = u->is_onnx("Reshape") || u->is_onnx("Unsqueeze") || u->is_onnx("Squeeze") || u->is_onnx("Flatten") ||
                      (u->is_onnx("Cast") && ir::is_integer(u->output(0)->dtype()));
    if (view && u->input(0) == v && depth < 4 && is_token_input(g, u->output(0), depth + 1)) return true;
  }
  return false;
}

}  // namespace

void use_kv_cache(ir::Graph& g, PassContext& ctx) {
  if (ctx.max_seq_len <= 0) return;
  const int64_t n_max = ctx.max_seq_len;
  auto pairs = find_cache_pairs(g);
  if (pairs.empty()) {
    // Often because an operator before attention could not be rewritten: its reason first.
    if (!ctx.not_lowered.empty())
      throw PassError(fmt::format("--max-seq-len: node '{}' cannot be computed ({}), so the attention after it was not "
                                  "rewritten and no KV cache was found",
                                  ctx.not_lowered.begin()->first, ctx.not_lowered.begin()->second));
    throw PassError(
        "--max-seq-len: the graph has no concat-style KV cache (a graph output Concat(past input, new, axis 2))");
  }

  std::vector<ir::Node*> attention;
  for (ir::Node* n : g.nodes())
    if (n->is(ir::kVulkanDomain, "et_vk.sdpa.default")) attention.push_back(n);

  // The program's inputs: tokens, then input_pos in place of the position ids.
  std::set<const ir::Value*> pasts;
  for (const auto& [present, p] : pairs) pasts.insert(p.past);
  ir::Value* positions = nullptr;
  ir::Value* tokens = nullptr;
  std::vector<ir::Value*> context;  // float inputs: the same at every call (an encoder's output)
  for (ir::Value* in : g.inputs) {
    if (pasts.count(in) || in == ctx.kv_input_pos) continue;
    if (ir::is_float(in->dtype())) {
      context.push_back(in);
      continue;
    }
    if (!ir::is_integer(in->dtype()) || in->shape().rank() != 2)
      throw PassError(fmt::format("--max-seq-len: input '{}' {} is neither tokens nor position ids", in->name(),
                                  in->type().str()));
    if (is_token_input(g, in) && !tokens) tokens = in;
    else if (!positions) positions = in;
    else throw PassError(fmt::format("--max-seq-len: input '{}' is a third integer input (an attention mask?); the "
                                     "program takes tokens and a position only", in->name()));
  }
  if (!tokens) throw PassError("--max-seq-len: no input feeds the token embedding");
  if (!positions && !ctx.kv_input_pos)
    throw PassError("--max-seq-len: the graph has no position ids input, and no positions computed from the cache "
                    "length (a Range over a past input's size) were found");
  if (positions && positions->shape() != tokens->shape())
    throw PassError(fmt::format("--max-seq-len: position ids {} do not match tokens {}", positions->shape().str(),
                                tokens->shape().str()));
  const int64_t seq = tokens->shape().sizes()[1];
  ir::Value* input_pos = ctx.kv_input_pos;
  if (positions) {
    if (!input_pos) input_pos = g.add_value(g.unique_name("input_pos"), {ir::DType::Int64, ir::Shape::of({1})});
    replace_positions(g, positions, input_pos, seq);
  }

  // The graph outputs that are presents (their places: a cache kept as state replaces the value).
  std::set<size_t> cache_outputs;
  for (const auto& [present, p] : pairs)
    for (size_t i = 0; i < g.outputs.size(); ++i)
      if (g.outputs[i] == p.output) cache_outputs.insert(i);
  std::map<const ir::Value*, attention::MaskKind> mask_kinds;
  ir::Value* zeros = nullptr;  // one zero constant stands for every fused cache (the runtime allocates its own)
  size_t fused = 0;
  std::set<const ir::Value*> used_presents;
  std::vector<std::pair<ir::Node*, int64_t>> windowed;  // fused attention in a window: over the state caches
  size_t biased = 0;  // fused attention with a position bias: over the state caches
  auto decide = [&](auto matches, const std::string& form) {  // the report's entry for an attention
    for (auto& a : ctx.attention)
      if (matches(a)) a.form = form;
  };
  for (ir::Node* n : attention) {
    ir::Value *q = n->input(0), *k = n->input(1), *v = n->input(2), *mask = n->input(3);
    int64_t rk = 0, rv = 0;
    const CachePair* kp = cache_source(g, k, pairs, rk);
    const CachePair* vp = cache_source(g, v, pairs, rv);
    if (!kp && !vp) {  // keys and values not from the cache (cross-attention over an encoder's output)
      decide([&](const auto& a) { return a.sdpa == n->name(); }, "sdpa (its keys and values are not the cache's)");
      continue;
    }
    if (!kp || !vp)
      throw PassError(fmt::format("--max-seq-len: attention '{}' does not read the KV cache's presents", n->name()));
    const auto qs = q->shape().sizes(), cs = kp->present->shape().sizes();
    if (qs[0] != 1 || qs[2] != seq || cs[2] != n_max || vp->present->shape() != kp->present->shape() || rk != rv)
      throw PassError(fmt::format("--max-seq-len: attention '{}': q {} with caches {} and {} (want batch 1, {} "
                                  "queries, {} positions)",
                                  n->name(), q->shape().str(), kp->present->shape().str(), vp->present->shape().str(),
                                  seq, n_max));
    auto checked = mask_kinds.find(mask);
    if (checked == mask_kinds.end())  // layers share their mask: checked once
      checked = mask_kinds.emplace(mask, mask_kind(mask, seq, n_max, ctx.kv_input_pos)).first;
    if (const auto& kind = checked->second; !kind.reason.empty())
      throw PassError(fmt::format("--max-seq-len: attention '{}': its mask '{}' {}", n->name(), mask->name(), kind.reason));
    else if (kind.bias) {  // sdpa_with_kv_cache has no bias: over the state caches, the graph's mask kept
      decide([&](const auto& a) { return a.sdpa == n->name(); },
             "sdpa over an update_cache cache (a position bias computed from input_pos)");
      ++biased;
      continue;
    } else if (kind.window > 0 && kind.window < n_max) {
      windowed.emplace_back(n, kind.window);  // sdpa_with_kv_cache has no window
      decide([&](const auto& a) { return a.sdpa == n->name(); },
             fmt::format("sdpa over an update_cache cache (a window of {})", kind.window));
      continue;
    }
    decide([&](const auto& a) { return a.sdpa == n->name(); }, "sdpa_with_kv_cache");
    used_presents.insert(kp->present);
    used_presents.insert(vp->present);
    const int64_t d = qs[3];
    // The runtime scales by 1/sqrt(D); another scale is folded into q.
    const double scale = n->attr_float("scale", 1.0 / std::sqrt(static_cast<double>(d)));
    const double extra = scale * std::sqrt(static_cast<double>(d));
    if (std::abs(extra - 1.0) > 1e-7)
      q = add_onnx_node(g, n, "Mul",
                        {q, add_float_constant(g, g.unique_name(n->name() + "_qscale"), {}, {static_cast<float>(extra)}, q->dtype())},
                        q->type());
    if (!zeros) {
      auto sz = std::vector<int64_t>{1, n_max, cs[1], cs[3]};
      zeros = g.add_constant(g.unique_name("kv_cache_zeros"), {ir::DType::Float32, ir::Shape::of(sz)},
                             ir::TensorData::owned(std::vector<uint8_t>(static_cast<size_t>(n_max * cs[1] * cs[3] * 4), 0)));
    } else if (zeros->shape().sizes() != std::vector<int64_t>{1, n_max, cs[1], cs[3]}) {
      throw PassError(fmt::format("--max-seq-len: attention '{}': caches of different shapes", n->name()));
    }
    ir::Value* qt = attention::transpose12(g, n, q);
    ir::Value* kt = attention::transpose12(g, n, kp->fresh);
    ir::Value* vt = attention::transpose12(g, n, vp->fresh);
    ir::Node* c = g.add_node(ir::kVulkanDomain, kCacheOp, {qt, kt, vt, zeros, zeros, nullptr, input_pos},
                             {{q->dtype(), ir::Shape::of({1, seq, qs[1], d})}}, g.unique_name(n->name() + "_kv"), n);
    c->set_attr("seq_len", seq);
    c->set_attr("is_causal", true);
    ir::Value* back = attention::transpose12(g, n, c->output(0));
    g.replace_all_uses(n->output(0), back);
    g.remove_node(n);
    ++fused;
  }
  // The caches no sdpa_with_kv_cache took are kept by update_cache; what reads them (attention in a
  // window, or left unfused) runs over all N rows with masks computed from input_pos.
  size_t state = 0;
  for (const auto& [present, p] : pairs)
    if (!used_presents.count(present)) attention::keep_cache_as_state(g, p, input_pos, n_max), ++state;
  for (const auto& [n, window] : windowed)
    n->set_input(3, attention::runtime_mask(g, g.nodes().front(), input_pos, seq, n_max, window, n->input(0)->dtype()));
  size_t unfused = 0;
  if (state)
    for (const auto& masked : attention::mask_state_attention(g, input_pos, seq, n_max)) {
      const std::string& softmax = masked.first;
      const int64_t window = masked.second;
      ++unfused;
      decide([&](const auto& a) { return a.node == softmax; },
             window ? fmt::format("unfused over an update_cache cache (a window of {})", window)
                    : std::string("unfused over an update_cache cache"));
    }
  if (state && windowed.empty() && biased == 0 && unfused == 0)
    throw PassError(fmt::format("--max-seq-len: {} of {} caches are read by no attention vkc recognises (a fused "
                                "et_vk.sdpa or a Softmax over the cache's {} positions)",
                                state, pairs.size(), n_max));
  if (state)
    ctx.notes.push_back(fmt::format(
        "--max-seq-len: {} of {} caches are kept by update_cache: {} windowed and {} position-biased fused "
        "attention(s) and {} unfused softmax(es) read all {} rows, with masks computed from input_pos; {} "
        "attention(s) use sdpa_with_kv_cache",
        state, pairs.size(), windowed.size(), biased, unfused, n_max, fused));
  // The new signature: tokens and input_pos in (in the graph's order), then the context inputs;
  // the presents leave the outputs.
  std::vector<ir::Value*> inputs;
  for (ir::Value* in : g.inputs) {
    if (in == positions) inputs.push_back(input_pos);
    else if (in == tokens) inputs.push_back(in);
    if (in == tokens && !positions) inputs.push_back(input_pos);
  }
  inputs.insert(inputs.end(), context.begin(), context.end());
  g.inputs = std::move(inputs);
  std::vector<ir::Value*> outputs;
  for (size_t i = 0; i < g.outputs.size(); ++i)
    if (!cache_outputs.count(i)) outputs.push_back(g.outputs[i]);
  g.outputs = std::move(outputs);
  g.topo_sort();
  eliminate_dead_code(g, ctx);
  ctx.kv_cache_layers = fused;
  ctx.kv_input_pos = input_pos;
  ctx.kv_step_tokens = seq;
}

}  // namespace vkc::passes
