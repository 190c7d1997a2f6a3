// Transformer-block runtime operators: et_vk.rms_norm, et_vk.sdpa, et_vk.apply_rotary_emb(_hf).
#include <fmt/format.h>

#include <cmath>

#include "../symint_ops.h"
#include "op_context.h"
#include "vkc/kernels/attention.h"

namespace vkc::runtime::cpu {
namespace {

// et_vk.rms_norm.default(x, w, eps)
void rms_norm(const OpContext& c) { c.set_output(kernels::rms_norm(c.tensor(0), c.tensor(1), c.float_arg(2))); }

// et_vk.sdpa.default(q, k, v, attn_mask?, scale?)
void sdpa(const OpContext& c) {
  const HostTensor& q = c.tensor(0);
  const double scale = c.is_null(4) ? 1.0 / std::sqrt(static_cast<double>(q.shape.back())) : c.float_arg(4);
  c.set_output(kernels::sdpa(q, c.tensor(1), c.tensor(2), c.opt_tensor(3), scale));
}

// et_vk.apply_rotary_emb.default(xq, xk, freqs_cos, freqs_sin) -> (xq_out, xk_out)
void rotary_emb(const OpContext& c) {
  const HostTensor &cos = c.tensor(2), &sin = c.tensor(3);
  c.set_outputs({kernels::rotary_emb_interleaved(c.tensor(0), cos, sin),
                 kernels::rotary_emb_interleaved(c.tensor(1), cos, sin)});
}

// et_vk.apply_rotary_emb_hf.default(xq, xk, freqs_cos, freqs_sin, start_pos) -> (xq_out, xk_out)
void rotary_emb_hf(const OpContext& c) {
  const HostTensor &cos = c.tensor(2), &sin = c.tensor(3);
  const int64_t start = c.int_arg(4);
  c.set_outputs({kernels::rotary_emb_half(c.tensor(0), cos, sin, start),
                 kernels::rotary_emb_half(c.tensor(1), cos, sin, start)});
}

// et_vk.select_as_symint.default(x, dim, index) -> SymInt: x's element `index` along `dim` (x of rank 1,
// or the first element of the other dims).
void select_as_symint(const OpContext& c) {
  const HostTensor& x = c.tensor(0);
  const int64_t dim = c.int_arg(1), index = c.int_arg(2);
  if (x.shape.empty() || dim < 0 || dim >= static_cast<int64_t>(x.shape.size()) || index < 0 || index >= x.shape[dim])
    c.fail("select_as_symint: dim or index out of range");
  c.set_symint_output(x.get_i(index * kernels::strides_of(x.shape)[dim]));
}

// sdpa_with_kv_cache.default(q, k, v, k_cache, v_cache, start_pos, seq_len, attn_mask, dropout_p, is_causal,
// scale): caches are this call's own state (zeros at load, as ET-VK allocates its own); the cache
// constants give only their shape.
void sdpa_with_kv_cache(const OpContext& c) {
  if (!c.is_null(7)) c.fail("attn_mask must be None");
  if (!c.is_null(8) && c.float_arg(8) != 0) c.fail("dropout must be 0");
  if (!c.is_null(9) && !c.bool_arg(9)) c.fail("is_causal must be True");
  if (!c.is_null(10)) c.fail("scale must be None (1/sqrt(D))");
  HostTensor& kc = c.persistent(0, c.tensor(3));
  HostTensor& vc = c.persistent(1, c.tensor(4));
  try {
    c.set_output(kernels::sdpa_with_kv_cache(c.tensor(0), c.tensor(1), c.tensor(2), kc, vc, c.int_arg(5)));
  } catch (const kernels::KernelError& e) {
    c.fail(e.what());
  }
}

// update_cache.default(value [1, S, H, D], cache [1, C, H, D], start_pos): the value's rows written
// into the cache at start_pos, in place. The cache's contents are this call's state (zeros at
// load, as the prepacked constant ET-VK writes into); the cache tensor holds them for its readers.
void update_cache(const OpContext& c) {
  const HostTensor& value = c.tensor(0);
  HostTensor& cache = c.persistent(0, c.tensor(1));
  const auto &vs = value.shape, &cs = cache.shape;
  if (vs.size() != 4 || cs.size() != 4 || vs[0] != 1 || cs[0] != 1 || vs[2] != cs[2] || vs[3] != cs[3])
    c.fail("value [1, S, H, D] and cache [1, C, H, D] do not agree");
  const int64_t start = c.int_arg(2), rows = vs[1], row = vs[2] * vs[3];
  if (start < 0 || start + rows > cs[1])
    c.fail(fmt::format("rows [{}, {}) are outside the cache's {}", start, start + rows, cs[1]));
  for (int64_t i = 0; i < rows * row; ++i) cache.set_f(start * row + i, value.get_f(i));
  c.set_input_tensor(1, cache);
  c.set_output(HostTensor::zeros(cache.dtype, {1}));
}

// sym_size.int and the SymInt arithmetic of bounded dynamic dims (symint_ops.h).
void symint_op(const OpContext& c) {
  c.set_symint_output(eval_symint_op(c, c.op(), [&](size_t i) { return c.tensor(i).shape; }));
}

}  // namespace

void add_llm_ops(OpTable& t) {
  for (const std::string& name : symint_operators()) t[name] = symint_op;
  t["et_vk.select_as_symint.default"] = select_as_symint;
  t["sdpa_with_kv_cache.default"] = sdpa_with_kv_cache;
  t["update_cache.default"] = update_cache;
  t["et_vk.rms_norm.default"] = rms_norm;
  t["et_vk.sdpa.default"] = sdpa;
  t["et_vk.apply_rotary_emb.default"] = rotary_emb;
  t["et_vk.apply_rotary_emb_hf.default"] = rotary_emb_hf;
}

}  // namespace vkc::runtime::cpu
