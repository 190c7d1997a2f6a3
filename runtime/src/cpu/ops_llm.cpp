// Transformer-block runtime operators: et_vk.rms_norm, et_vk.sdpa.
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

}  // namespace

void add_llm_ops(OpTable& t) {
  t["et_vk.rms_norm.default"] = rms_norm;
  t["et_vk.sdpa.default"] = sdpa;
}

}  // namespace vkc::runtime::cpu
