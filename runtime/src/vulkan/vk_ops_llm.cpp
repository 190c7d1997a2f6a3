// Transformer-block operators on the GPU: et_vk.apply_rotary_emb(_hf) (rotary.glsl), et_vk.rms_norm
// (layer_norm.glsl's RMS variant), et_vk.sdpa (sdpa.glsl), aten.embedding (embedding.glsl).
#include <fmt/format.h>

#include <cstdlib>

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>

#include "../symint_ops.h"
#include "vk_encoder.h"

namespace vkc::runtime::vk {
namespace {

// Whether the fused attention over the cache (sdpa_kv_cache_fused) runs a sdpa_with_kv_cache whose
// head dim is `d`.
bool fused_cache_attention(const Encoder& e, int64_t d) { return !e.cpu_device() && d <= 256 && Encoder::fusing(); }

// Whether apply_rotary_emb_hf's outputs `outs` (q, k) are read only by the next call that dispatches,
// a sdpa_with_kv_cache taking them as its q and k, which runs fused and can rotate them itself (a
// start_pos set at run time, `start_symint`, must be that attention's own).
bool rope_into_attention(Encoder& e, const std::vector<int32_t>& outs, int32_t start_symint) {
  const serializer::VkGraph& g = *e.graph();
  // The next call that dispatches: select_as_symint (the attention's start_pos, read on the host)
  // may come between.
  const serializer::VkOperatorCall* next = e.next_call();
  const serializer::VkOperatorCall* end = g.chain.data() + g.chain.size();
  while (next && next->name == "et_vk.select_as_symint.default") next = next + 1 < end ? next + 1 : nullptr;
  if (!next || next->name != "sdpa_with_kv_cache.default" || next->args.size() < 6 || next->args[0] != outs[0] ||
      next->args[1] != outs[1] || outs[0] == outs[1] || (start_symint >= 0 && next->args[5] != start_symint))
    return false;
  for (int32_t t : {e.id(2), e.id(3)}) {
    const auto* vt = std::get_if<serializer::VkTensor>(&g.values.at(static_cast<size_t>(t)));
    if (!vt || vt->constant_id >= 0) return false;  // the tables: run-time tensors
  }
  for (uint32_t o : g.output_ids)
    if (static_cast<int32_t>(o) == outs[0] || static_cast<int32_t>(o) == outs[1]) return false;
  for (const serializer::VkOperatorCall& c : g.chain) {
    if (&c == &e.call() || &c == next) continue;
    for (int32_t a : c.args) {
      if (a == outs[0] || a == outs[1]) return false;
      if (const auto* l = std::get_if<serializer::VkValueList>(&g.values.at(static_cast<size_t>(a))))
        for (int32_t item : l->items)
          if (item == outs[0] || item == outs[1]) return false;
    }
  }
  // The fused attention reads the unrotated q and k while it writes its output (or the view after
  // it): they may not share memory (the memory plan keeps them apart, plan_memory.cpp).
  std::vector<int32_t> written{next->args.back()};
  if (next + 1 < end && (next + 1)->name == "aten.view_copy.default") written.push_back((next + 1)->args.back());
  auto mem = [&](int32_t id) {
    const auto* t = std::get_if<serializer::VkTensor>(&g.values.at(static_cast<size_t>(id)));
    return t ? t->mem_obj_id : -1;
  };
  for (int32_t in : {e.id(0), e.id(1)})
    for (int32_t w : written)
      if (mem(in) >= 0 && mem(in) == mem(w)) return false;
  const auto* cache = std::get_if<serializer::VkTensor>(&g.values.at(static_cast<size_t>(next->args[3])));
  return cache && cache->dims.size() == 4 && fused_cache_attention(e, cache->dims[3]);
}

// apply_rotary_emb(xq, xk, cos, sin) / apply_rotary_emb_hf(xq, xk, cos, sin, start_pos) -> (xq_out, xk_out):
// one dispatch per rotated tensor; on a GPU, when only the next call's fused attention over the cache
// reads the rotated q and k, none (that kernel rotates them as it reads them).
void rotary(Encoder& e) {
  const bool halves = e.op() == "et_vk.apply_rotary_emb_hf.default";
  const std::vector<int32_t> outs = e.value_list(e.num_args() - 1);
  if (outs.size() != 2) e.fail("expected two outputs (xq_out, xk_out)");
  GpuTensor& q_out = e.tensor_id(outs[0]);
  GpuTensor& cos = e.tensor(2, &q_out);
  GpuTensor& sin = e.tensor(3, &q_out);
  // start_pos: a number, or a SymInt set at run time (the tables then hold every position, read at
  // input_pos as ExecuTorch's exports call it: the shaders add its buffer element).
  const bool at_pos = halves && std::holds_alternative<serializer::VkSymInt>(e.value(4)) &&
                      e.symint_sources.count(e.id(4)) > 0;
  const int32_t start = halves && !at_pos ? static_cast<int32_t>(e.int_arg(4)) : 0;
  if (cos.dims.size() != 2 || sin.dims != cos.dims) e.fail("cos and sin must both be [rows, cols]");
  if (halves && q_out.texture == cos.texture && cos.packed_dim == 0 && rope_into_attention(e, outs, at_pos ? e.id(4) : -1)) {
    GpuTensor& x = e.tensor(0, &q_out);
    const int64_t d = x.dims.back(), cols = cos.dims[1];
    // (whole texels per half: the attention kernel rotates a texel with its partner texel's 4)
    if (cols % 8 == 0 && cols <= d && cos.dims[0] >= start + x.dims[x.dims.size() - 3]) {
      e.pending_rope = Encoder::PendingRope{outs[0], outs[1], e.id(0), e.id(1), e.id(2), e.id(3), start, at_pos};
      return;
    }
  }
  const Encoder::SymIntSource pos = at_pos ? e.symint_source(4) : Encoder::SymIntSource{};
  for (size_t k = 0; k < 2; ++k) {
    GpuTensor& out = e.tensor_id(outs[k]);
    GpuTensor& x = e.tensor(k, &out);
    e.require_rep(x, out, "x", true);
    e.require_rep(cos, out, "cos", true);
    e.require_rep(sin, out, "sin", true);
    if (out.texture && out.packed_dim != 0) e.fail("textures must be width-packed");
    if (x.dims.size() < 3 || x.dims != out.dims) e.fail("x must be [.., S, H, D] like its output");
    const int64_t d = x.dims.back(), seq = x.dims[x.dims.size() - 3], cols = cos.dims[1];
    if (halves ? (cols % 2 != 0 || cols > d) : cols * 2 != d)
      e.fail(fmt::format("a table of {} columns does not fit head dim {}", cols, d));
    if (cos.dims[0] < start + seq) e.fail(fmt::format("the table has {} rows, {} needed", cos.dims[0], start + seq));
    const auto& v = e.variant(out);
    Push p(v);
    p.iv("sizes", out.sizes).iv("table_sizes", cos.sizes).i("start_pos", start).i("pos_index", at_pos ? pos.index : -1);
    // (without a run-time start the position buffer is not read: any buffer binds)
    const VkBuffer pos_buffer = at_pos ? pos.buffer : e.filled(1, 0, out.dtype);
    e.dispatch(v, {out.resource(), x.resource(), cos.resource(), sin.resource(), {pos_buffer, VK_NULL_HANDLE}}, p,
               out.items());
  }
}

// Whether rms_norm's output y (its input x) may be left to its readers: on a GPU, every reader a
// matrix-vector linear with a _norm variant that reads y as its input alone, y no delegate output,
// and x intact until the last of them has run: no call from here to it (and the one after it, which
// a linear may take as its epilogue) writes x's memory object (vkc's memory plan keeps x's memory
// for x until then, plan_memory.cpp; another plan may not).
bool leave_norm_to_linears(Encoder& e, int32_t x, int32_t y) {
  if (!Encoder::fusing() || e.cpu_device() || e.is_delegate_output(y)) return false;
  const auto& g = *e.graph();
  const auto& chain = g.chain;
  const size_t self = static_cast<size_t>(&e.call() - chain.data());
  size_t last = 0;
  for (size_t j = self + 1; j < chain.size(); ++j) {
    const auto& args = chain[j].args;
    if (std::find(args.begin(), args.end(), y) == args.end()) continue;
    if (!fp_linear_takes_gemv_norm(e, chain[j], y) && !q4_linear_takes_gemv_norm(e, chain[j], y) &&
        !dq8ca_takes_gemv_norm(e, chain[j], y))
      return false;
    last = j;
  }
  if (last == 0) return false;
  const auto mem = [&](int32_t id) {
    const auto* t = std::get_if<serializer::VkTensor>(&g.values.at(static_cast<size_t>(id)));
    return t ? t->mem_obj_id : -1;
  };
  const int32_t x_mem = mem(x);
  if (x_mem < 0) return true;  // memory of its own
  for (size_t j = self + 1; j < chain.size() && j <= last + 1; ++j) {
    if (chain[j].args.empty()) continue;
    const int32_t out = chain[j].args.back();
    std::vector<int32_t> written{out};
    if (const auto* l = std::get_if<serializer::VkValueList>(&g.values.at(static_cast<size_t>(out)))) written = l->items;
    for (int32_t w : written)
      if (w != x && mem(w) == x_mem) return false;
  }
  return true;
}

// rms_norm(x, w, eps): over the last dim. Left to the matrix-vector linears that alone read its
// output where leave_norm_to_linears allows (they run it on their input rows: no dispatch here).
void rms_norm(Encoder& e) {
  GpuTensor& out = e.out();
  GpuTensor& in = e.tensor(0, &out);
  e.require_rep(in, out, "the input", true);
  const int64_t w = in.dims.empty() ? 1 : in.dims.back();
  const VkBuffer weight = e.raw(1, out.dtype, w);
  if (!in.int8x4 && in.dims == out.dims && in.dtype == out.dtype && leave_norm_to_linears(e, e.id(0), e.call().args.back())) {
    e.pending_norms[e.call().args.back()] = {e.id(0), weight, static_cast<float>(e.scalar_arg(2))};
    return;
  }
  const VkBuffer zeros = e.filled(w, 0, out.dtype);
  // Long rows (a hidden size; on a GPU, any but the shortest): a workgroup per row unit
  // (layer_norm_wg.glsl's RMS variant), of 256 invocations for rows of 1024 or more on a GPU.
  const bool wide = w >= 256 || (w >= 32 && !e.cpu_device());
  const auto& v = e.variant(out, {}, !wide ? "rms_norm" : w >= 1024 && !e.cpu_device() ? "rms_norm_wg256" : "rms_norm_wg");
  Push p(v);
  p.iv("sizes", out.sizes).f("eps", static_cast<float>(e.scalar_arg(2))).i("packed_dim", out.packed_dim);
  ivec4 rows = out.sizes;
  rows[0] = 1;
  e.dispatch(v, {out.resource(), in.resource(), {weight, VK_NULL_HANDLE}, {zeros, VK_NULL_HANDLE}}, p,
             out.items(rows) * (wide ? v.local_size[0] : 1));
}

// Arguments 0-2 (q, k, v) in `out`'s storage and layout, each also passed to `check`.
template <typename Check>
std::tuple<GpuTensor&, GpuTensor&, GpuTensor&> attention_operands(Encoder& e, GpuTensor& out, Check check) {
  GpuTensor& q = e.tensor(0, &out);
  GpuTensor& k = e.tensor(1, &out);
  GpuTensor& v = e.tensor(2, &out);
  for (const auto& [t, what] : {std::pair<GpuTensor*, const char*>{&q, "q"}, {&k, "k"}, {&v, "v"}}) {
    e.require_rep(*t, out, what, true);
    check(*t, what);
  }
  return {q, k, v};
}

// sdpa(q, k, v, attn_mask?, scale?) on [B, H, S, D] tensors.
void sdpa(Encoder& e) {
  GpuTensor& out = e.out();
  auto [q, k, v] = attention_operands(e, out, [&](const GpuTensor& t, const char* what) {
    if (t.dims.size() > 4) e.fail(fmt::format("{} has rank {} (at most 4)", what, t.dims.size()));
  });
  if (out.texture && out.packed_dim != 0) e.fail("textures must be width-packed");
  if (q.sizes[0] != k.sizes[0] || k.sizes[1] != v.sizes[1] || out.sizes[0] != v.sizes[0])
    e.fail("q, k and v sizes do not agree");
  const bool has_mask = !e.is_null(3);
  GpuTensor& mask = has_mask ? e.tensor(3, &out) : q;
  if (has_mask) e.require_rep(mask, out, "the mask", true);
  const double scale = e.is_null(4) ? 1.0 / std::sqrt(static_cast<double>(q.dims.back())) : e.float_arg(4);
  // Small head dims: an invocation per query row; up to 256: a workgroup per row (scores computed
  // once per key either way); beyond: sdpa.glsl. On a GPU the row kernel's 64-row workgroups leave
  // most of it idle unless there are many rows: a workgroup per row up to 16384 rows (H200: timm
  // test_vit's 404 rows 1.06 -> 0.72 ms per run, ExecuTorch 0.90; ViT, BERT, CLIP, Whisper
  // encoders the same or faster).
  ivec4 rows = out.sizes;
  rows[0] = 1;
  const int64_t n_rows = static_cast<int64_t>(rows[1]) * rows[2] * rows[3];
  const bool row = q.sizes[0] <= 32 && v.sizes[0] <= 32 && (e.cpu_device() || n_rows >= 16384);
  const bool wg = !row && q.sizes[0] <= 256 && v.sizes[0] <= 256;
  const auto& var = e.variant(out, {}, row ? "sdpa_row" : wg ? "sdpa_wg" : "sdpa");
  Push p(var);
  p.iv("out_sizes", out.sizes).iv("q_sizes", q.sizes).iv("k_sizes", k.sizes).iv("v_sizes", v.sizes);
  p.iv("mask_sizes", mask.sizes).i("has_mask", has_mask ? 1 : 0).f("scale", static_cast<float>(scale));
  const int64_t blocks = (rows[1] + var.local_size[0] - 1) / var.local_size[0];  // sdpa_row: of 64 positions
  const int64_t items = row ? blocks * rows[2] * rows[3] * var.local_size[0] : wg ? n_rows * var.local_size[0] : out.items();
  e.dispatch(var, {out.resource(), q.resource(), k.resource(), v.resource(), mask.resource()}, p, items);
}

// embedding(weight [V, D] constant, indices, ...): padding_idx only matters for training.
void embedding(Encoder& e) {
  GpuTensor& out = e.out();
  GpuTensor& idx = e.tensor(1);
  if (idx.texture != out.texture) e.fail("the indices and the output must share a storage");
  if (idx.dtype != ir::DType::Int32) e.fail(fmt::format("indices are {}, int32 expected", idx.dtype_name()));
  const GpuTensor& table = e.constant(0, out.dtype);
  if (table.dims.size() != 2 || out.dims.empty() || table.dims[1] != out.dims.back())
    e.fail("the table must be [V, D] with D the output's last dim");
  if (out.dims.size() > 4 || idx.dims.size() > 3) e.fail("the output has rank > 4");
  const auto& v = e.variant(out);
  Push p(v);
  p.iv("out_sizes", out.sizes).iv("idx_sizes", idx.sizes).iv("packed_dims", {out.packed_dim, idx.packed_dim, 0, 0});
  p.i("rows", static_cast<int32_t>(table.dims[0]));
  e.dispatch(v, {out.resource(), idx.resource(), {table.buffer.buffer, VK_NULL_HANDLE}}, p, out.items());
}

// et_vk.select_as_symint(x, dim, index) -> SymInt: read at run time from x's staging buffer (x must be
// a delegate input, written on the host before every run), as ET-VK reads the input's CPU copy.
void select_as_symint(Encoder& e) {
  const int32_t x = e.id(0);
  const GpuTensor* staged = e.input_staging(x);
  if (!staged) e.fail("select_as_symint reads a tensor that is not a delegate input");
  if (staged->dtype != ir::DType::Int32 && staged->dtype != ir::DType::Int64)
    e.fail(fmt::format("select_as_symint reads a {} tensor, an integer one expected", staged->dtype_name()));
  const int64_t dim = e.int_arg(1), index = e.int_arg(2);
  const auto& dims = staged->dims;
  if (dim < 0 || dim >= static_cast<int64_t>(dims.size()) || index < 0 || index >= dims[dim])
    e.fail("select_as_symint: dim or index out of range");
  int64_t stride = 1;
  for (size_t k = static_cast<size_t>(dim) + 1; k < dims.size(); ++k) stride *= dims[k];
  const int64_t words = staged->dtype == ir::DType::Int64 ? 2 : 1;  // little-endian: the low word
  e.symint_sources[e.id(e.num_args() - 1)] = {staged->buffer.buffer, static_cast<int32_t>(index * stride * words)};
}

// The fewest keys one workgroup of the fused attention over the cache attends over when a row's
// keys are split among several (flash-decoding): VKC_VULKAN_ATTN_SPLIT_KEYS (0: no split), default
// 16 (H100, 1.1B shape, contexts 128-192: 16 keys a part 1.13x the decode tokens/s of 64, 32
// 1.09x, 8 1.05x).
int64_t attention_split_keys() {
  const char* env = std::getenv("VKC_VULKAN_ATTN_SPLIT_KEYS");
  return env ? std::max<int64_t>(0, std::atoll(env)) : int64_t{16};
}

// The _dec variant a decode step's attention (one query row a call) takes, by suffix: none
// (nullopt, the workgroup-per-part kernels) by default, "" under VKC_VULKAN_ATTN_DECODE=1 (256
// invocations, parts of 256 keys), "_w32" under =32 (parts of 32 keys). Off by default: on an H100
// (2026-12-07, 1.1B shape, contexts 128-200) the one-row kernel took 20.6 us a layer where the
// split kernels take 13.5 (decode 0.84-0.95x). Read at each record (the tests switch it).
std::optional<std::string> attention_decode() {
  const char* env = std::getenv("VKC_VULKAN_ATTN_DECODE");
  const std::string_view v = env ? env : "0";
  if (v.empty() || v == "0") return std::nullopt;
  return std::string(v == "32" ? "_w32" : "");
}

// Whether a decode step's attention (one query row a call) runs by kv head where it can (the _gqa
// variants: a workgroup per kv head and part of its keys for the query heads sharing it):
// VKC_VULKAN_ATTN_GQA=0 keeps the workgroup-per-query-head kernels. Read at each record (the tests
// switch it).
bool attention_gqa() {
  const char* env = std::getenv("VKC_VULKAN_ATTN_GQA");
  return !env || std::string_view(env) != "0";
}

// The most parts a query row's keys are split in: VKC_VULKAN_ATTN_PARTS, by default as many as
// make about kAttentionWorkgroups workgroups for the call's query rows. The parts follow the keys
// a row has (read on the GPU), not the cache's rows: a step early in a long cache starts no
// workgroups that would leave at once.
int64_t attention_parts(int64_t query_rows) {
  constexpr int64_t kAttentionWorkgroups = 512;  // a few per multiprocessor of a large GPU
  const char* env = std::getenv("VKC_VULKAN_ATTN_PARTS");
  return env ? std::max<int64_t>(1, std::atoll(env)) : std::max<int64_t>(1, kAttentionWorkgroups / query_rows);
}

// The most parts a query row's keys are split in, whatever the dispatch's workgroups a row
// (attention_parts: the parts past them stay empty): VKC_VULKAN_ATTN_ROW_PARTS (0: as many as the
// dispatch has), default 32. The last part of a row adds the parts up, GQA_BATCH at a time, one
// memory latency each, so a long row in many short parts waits on its sum: H100, 1.1B shape,
// 1,500-1,564 keys, 8da4w decode 1.25x (fp16 1.18x) the tokens/s of 94 parts of 16 keys with 32
// parts of 47-49 (16 parts of 94-98: 1.09x; measured with the dispatch's workgroups a row at 32 and
// 16, VKC_VULKAN_ATTN_PARTS); up to 512 keys nothing changes (parts of 16 keys). The dispatch keeps
// its workgroups: with fewer (VKC_VULKAN_ATTN_PARTS=32), 128-192 keys in the same parts were
// 0.98-0.99x (8da4w, int4). bench/README.md, "Twentieth session". Read at each record (the tests
// switch it).
int64_t attention_row_parts(int64_t splits) {
  const char* env = std::getenv("VKC_VULKAN_ATTN_ROW_PARTS");
  const int64_t n = env ? std::max<int64_t>(0, std::atoll(env)) : int64_t{32};
  return n == 0 ? splits : std::min(n, splits);
}

// sdpa_with_kv_cache(q, k, v, k_cache, v_cache, start_pos, seq_len, attn_mask, dropout, is_causal, scale):
// k and v go into this delegate's own caches (buffers of the cache constants' shape, allocated here,
// never read before written) at start_pos, then causal attention over them (kv_cache_update.glsl,
// sdpa_kv_cache.glsl); on GPUs one dispatch does both (sdpa_kv_cache_fused.glsl).
void sdpa_with_kv_cache(Encoder& e) {
  if (!e.is_null(7)) e.fail("attn_mask must be None");
  if (!e.is_null(10)) e.fail("scale must be None (1/sqrt(D))");
  if (!e.is_null(9) && !e.bool_arg(9)) e.fail("is_causal must be True");
  GpuTensor& out = e.out();
  auto [q_arg, k_arg, v] = attention_operands(e, out, [&](const GpuTensor& t, const char* what) {
    if (t.dims.size() != 4 || t.dims[0] != 1) e.fail(fmt::format("{} must be [1, S, H, D]", what));
  });
  // A rotary embedding left to this call (rotary(), rope_into_attention): q and k unrotated.
  const std::optional<Encoder::PendingRope> rope = e.pending_rope;
  e.pending_rope.reset();
  const bool rotate = rope && rope->q_out == e.id(0) && rope->k_out == e.id(1);
  GpuTensor& q = rotate ? e.tensor_id(rope->q_in) : q_arg;
  GpuTensor& k = rotate ? e.tensor_id(rope->k_in) : k_arg;
  if (out.texture && out.packed_dim != 0) e.fail("textures must be width-packed");
  const auto& kc_dims = e.vk_tensor(e.id(3)).dims;
  if (kc_dims.size() != 4 || e.vk_tensor(e.id(4)).dims != kc_dims) e.fail("the caches must be [1, C, Hkv, D] alike");
  const std::vector<int64_t> cache_dims(kc_dims.begin(), kc_dims.end());
  const int64_t rows = cache_dims[1], kv_heads = cache_dims[2], d = cache_dims[3];
  if (k.dims != v.dims || k.dims[2] != kv_heads || k.dims[3] != d || q.dims[3] != d || q.dims != out.dims ||
      kv_heads == 0 || q.dims[2] % kv_heads != 0 || k.dims[1] != q.dims[1])
    e.fail("q [1,S,Hq,D], k/v [1,S,Hkv,D] and the caches [1,C,Hkv,D] do not agree");
  const Encoder::SymIntSource pos = e.symint_source(5);
  GpuTensor like;
  like.dtype = out.dtype;
  GpuTensor& k_cache = e.persistent(0, cache_dims, like);
  GpuTensor& v_cache = e.persistent(1, cache_dims, like);
  // On a GPU (head dims up to 256): one dispatch writes the new rows into the caches and attends
  // over them, a workgroup per query row (sdpa_kv_cache_fused; VKC_VULKAN_FUSE=0: three).
  if (rotate && !fused_cache_attention(e, d)) e.fail("a rotary embedding was left to an attention that does not run fused");
  if (fused_cache_attention(e, d)) {
    // A view [1, S, Hq * D] that alone reads the output (heads merged for the output projection)
    // is written instead.
    GpuTensor* target = &out;
    int32_t merge = 0;
    if (const serializer::VkOperatorCall* c = e.sole_next("aten.view_copy.default")) {
      GpuTensor& view = e.tensor_id(c->args.back());
      const std::vector<int64_t> merged{1, q.dims[1], q.dims[2] * d};
      if (view.dims == merged && view.dtype == out.dtype && view.texture == out.texture && !view.int8x4 &&
          (!view.texture || (view.packed_dim == 0 && d % 4 == 0))) {
        e.absorb_next();
        target = &view;
        merge = view.texture ? 1 : 0;
      }
    }
    // Flash-decoding over caches of more than split_keys rows: several workgroups per query row,
    // each over a part of its keys, the last of them to finish adding the parts up (one token's
    // attention then fills more of the GPU than one workgroup per head). A row of L keys is split
    // in parts of max(split_keys, ceil(L / splits)) keys (the shader reads L), at most splits
    // (attention_parts) and at most kMaxParts workgroups in all: a decode step's few query rows
    // split into many parts, a prefill chunk's many rows (4096 for 128 tokens of 32 heads)
    // already fill the GPU and stay whole (as 128 parts each, 524,288 workgroups, they took 12 of
    // a 1.1B prefill's 26 ms on an H100).
    constexpr int64_t kMaxParts = 4096;
    const int64_t query_rows = q.dims[1] * q.dims[2], dv4 = (d + 3) / 4;
    // One query row a call (a decode step) where the device has subgroup arithmetic: the _dec
    // variants, an invocation a key, a part per 256 keys of the cache (attention_decode()).
    const std::optional<std::string> dec = attention_decode();
    const std::string fused = e.subgroup_arithmetic() ? "sdpa_kv_cache_fused_sg" : "sdpa_kv_cache_fused";
    const std::string base = rotate ? fused + "_rope" : fused;
    // (has_variant: a device without 256-invocation workgroups keeps the kernels below.)
    const bool decode =
        q.dims[1] == 1 && e.subgroup_arithmetic() && dec && dv4 <= 32 && e.has_variant(out, base + "_dec" + *dec);
    const codegen::LibraryVariant* dec_var = decode ? &e.variant(out, {}, base + "_dec" + *dec) : nullptr;
    const int64_t part_keys = dec_var ? dec_var->local_size[0] : 0;
    const int64_t min_keys = attention_split_keys();
    // Otherwise one query row a call by kv head (attention_gqa()): the group's query heads' output
    // texels one an invocation (G * D / 4 <= 256), parts as below but per kv head.
    const int64_t group = q.dims[2] / kv_heads;
    const bool gqa = !decode && q.dims[1] == 1 && e.subgroup_arithmetic() && attention_gqa() && d <= 256 &&
                     group * dv4 <= 256 && e.has_variant(out, base + "_gqa");
    const int64_t split_rows = gqa ? kv_heads : query_rows;  // the rows whose keys are split
    const int64_t splits =
        decode         ? std::min((rows + part_keys - 1) / part_keys, std::max<int64_t>(1, kMaxParts / query_rows))
        : min_keys > 0 ? std::min({(rows + min_keys - 1) / min_keys, std::max<int64_t>(1, kMaxParts / split_rows),
                                   attention_parts(split_rows)})
                       : 1;
    const bool split = decode || gqa || splits > 1;
    // (The _sg variants reduce across subgroups first, where the device has subgroup arithmetic.)
    const auto& var = dec_var ? *dec_var
                      : gqa   ? e.variant(out, {}, base + "_gqa")
                              : e.variant(out, {}, split ? base + "_split" : base);
    // A chunk of several rows writes them into the caches first (phase 1) and then attends over
    // the caches alone (phase 2); one new row is read from k and v as it is written (phase 0).
    const bool two_phases = q.dims[1] > 1;
    const auto push = [&](const codegen::LibraryVariant& v, int32_t phase) {
      Push p(v);
      p.iv("out_sizes", out.sizes).i("kv_heads", static_cast<int32_t>(kv_heads)).i("cache_rows", static_cast<int32_t>(rows));
      p.i("pos_index", pos.index).i("out_merge", merge).i("phase", phase);
      p.i("splits", static_cast<int32_t>(splits)).i("split_keys", static_cast<int32_t>(split ? min_keys : rows));
      p.i("row_parts", static_cast<int32_t>(attention_row_parts(splits)));
      if (rotate)
        p.iv("table_sizes", e.tensor_id(rope->cos).sizes).i("rope_start", rope->start).i("rope_at_pos", rope->at_pos ? 1 : 0);
      return p;
    };
    std::vector<Resource> res{target->resource(),
                              q.resource(),
                              {k_cache.buffer.buffer, VK_NULL_HANDLE},
                              {v_cache.buffer.buffer, VK_NULL_HANDLE},
                              {pos.buffer, VK_NULL_HANDLE},
                              k.resource(),
                              v.resource()};
    if (rotate) {
      res.push_back(e.tensor_id(rope->cos).resource());
      res.push_back(e.tensor_id(rope->sin).resource());
    }
    if (two_phases) {
      const auto& writer = e.variant(out, {}, base);
      e.dispatch(writer, res, push(writer, 1), query_rows * writer.local_size[0]);
    }
    const int32_t phase = two_phases ? 2 : 0;
    if (!split) {
      e.dispatch(var, std::move(res), push(var, phase), query_rows * var.local_size[0]);
      return;
    }
    // The parts' results, and a count per query row of its parts done (zero at load; the last part
    // of a row adds them up and leaves the count at zero for the next run).
    GpuTensor like_f32;
    like_f32.dtype = ir::DType::Float32;
    GpuTensor& partial = e.scratch({query_rows * splits * (dv4 + 1) * 4}, like_f32);
    res.push_back({partial.buffer.buffer, VK_NULL_HANDLE});
    res.push_back({e.filled(query_rows, 0, ir::DType::Int32), VK_NULL_HANDLE});
    e.dispatch(var, std::move(res), push(var, phase), split_rows * splits * var.local_size[0]);
    return;
  }
  for (const auto& [value, cache] : {std::pair<GpuTensor*, GpuTensor*>{&k, &k_cache}, {&v, &v_cache}}) {
    const auto& var = e.variant(*value, {}, "kv_cache_update");
    Push p(var);
    p.iv("value_sizes", value->sizes).i("cache_rows", static_cast<int32_t>(rows)).i("pos_index", pos.index);
    e.dispatch(var, {{cache->buffer.buffer, VK_NULL_HANDLE}, value->resource(), {pos.buffer, VK_NULL_HANDLE}}, p,
               value->items());
  }
  // A workgroup per query row on a GPU under VKC_VULKAN_FUSE=0 (sdpa_kv_cache_fused's attention
  // alone); else an invocation per output texel, each computing the scores it needs.
  const bool wg = !e.cpu_device() && d <= 256;
  const auto& var = e.variant(out, {}, wg ? "sdpa_kv_cache_wg" : "sdpa_kv_cache");
  Push p(var);
  p.iv("out_sizes", out.sizes).i("kv_heads", static_cast<int32_t>(kv_heads)).i("cache_rows", static_cast<int32_t>(rows));
  p.i("pos_index", pos.index);
  const int64_t query_rows = q.dims[1] * q.dims[2];
  e.dispatch(var,
             {out.resource(), q.resource(), {k_cache.buffer.buffer, VK_NULL_HANDLE},
              {v_cache.buffer.buffer, VK_NULL_HANDLE}, {pos.buffer, VK_NULL_HANDLE}},
             p, wg ? query_rows * var.local_size[0] : out.items());
}

// update_cache(value [1, S, Hkv, D], cache [1, C, Hkv, D], start_pos) -> dummy [1]: the value's rows
// written into the cache tensor at start_pos (kv_cache_update.glsl). The cache is state: one tensor
// whose rows stay across runs, shared by the program's instances at several sizes, that later
// calls read (its initial zeros: the prepacked constant).
void update_cache(Encoder& e) {
  GpuTensor& value = e.tensor(0);
  GpuTensor& cache = e.state_tensor(e.id(1));  // one cache for the program at every size
  if (cache.texture) e.fail("the cache must be a buffer");
  if (value.texture && value.packed_dim != 0) e.fail("textures must be width-packed");
  const auto& vd = value.dims;
  const auto& cd = cache.dims;
  if (vd.size() != 4 || cd.size() != 4 || vd[0] != 1 || cd[0] != 1 || vd[2] != cd[2] || vd[3] != cd[3] ||
      value.dtype != cache.dtype)
    e.fail("value [1, S, Hkv, D] and cache [1, C, Hkv, D] do not agree");
  const Encoder::SymIntSource pos = e.symint_source(2);
  const auto& var = e.variant(value, {}, "kv_cache_update");
  Push p(var);
  p.iv("value_sizes", value.sizes).i("cache_rows", static_cast<int32_t>(cd[1])).i("pos_index", pos.index);
  e.dispatch(var, {{cache.buffer.buffer, VK_NULL_HANDLE}, value.resource(), {pos.buffer, VK_NULL_HANDLE}}, p,
             value.items());
}

// sym_size.int and the SymInt arithmetic of bounded dynamic dims (symint_ops.h): evaluated while
// the instance of one size is encoded, from its tensors' dims.
void symint_op(Encoder& e) {
  e.encoded_symints[e.id(e.num_args() - 1)] =
      eval_symint_op(e, e.op(), [&](size_t i) {
        const auto& d = e.vk_tensor(e.id(i)).dims;
        return std::vector<int64_t>(d.begin(), d.end());
      });
}

}  // namespace

void add_llm_ops(std::unordered_map<std::string, OpEncoder>& t) {
  t["et_vk.rms_norm.default"] = rms_norm;
  t["et_vk.sdpa.default"] = sdpa;
  t["et_vk.select_as_symint.default"] = select_as_symint;
  for (const std::string& name : symint_operators()) t[name] = symint_op;
  t["sdpa_with_kv_cache.default"] = sdpa_with_kv_cache;
  t["update_cache.default"] = update_cache;
  t["aten.embedding.default"] = embedding;
  t["et_vk.apply_rotary_emb.default"] = rotary;
  t["et_vk.apply_rotary_emb_hf.default"] = rotary;
}

}  // namespace vkc::runtime::vk
