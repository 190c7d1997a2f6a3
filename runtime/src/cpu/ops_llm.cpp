// Transformer-block runtime operators: et_vk.rms_norm, et_vk.sdpa, et_vk.apply_rotary_emb(_hf).
#include <cmath>

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

}  // namespace

void add_llm_ops(OpTable& t) {
  t["et_vk.rms_norm.default"] = rms_norm;
  t["et_vk.sdpa.default"] = sdpa;
  t["et_vk.apply_rotary_emb.default"] = rotary_emb;
  t["et_vk.apply_rotary_emb_hf.default"] = rotary_emb_hf;
}

}  // namespace vkc::runtime::cpu
