// Transformer-block operators on the GPU: et_vk.apply_rotary_emb(_hf) (rotary.glsl).
#include <fmt/format.h>

#include "vk_encoder.h"

namespace vkc::runtime::vk {
namespace {

// apply_rotary_emb(xq, xk, cos, sin) / apply_rotary_emb_hf(xq, xk, cos, sin, start_pos) -> (xq_out, xk_out):
// one dispatch per rotated tensor.
void rotary(Encoder& e) {
  const bool halves = e.op() == "et_vk.apply_rotary_emb_hf.default";
  const std::vector<int32_t> outs = e.value_list(e.num_args() - 1);
  if (outs.size() != 2) e.fail("expected two outputs (xq_out, xk_out)");
  GpuTensor& q_out = e.tensor_id(outs[0]);
  GpuTensor& cos = e.tensor(2, &q_out);
  GpuTensor& sin = e.tensor(3, &q_out);
  const int32_t start = halves ? static_cast<int32_t>(e.int_arg(4)) : 0;
  if (cos.dims.size() != 2 || sin.dims != cos.dims) e.fail("cos and sin must both be [rows, cols]");
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
    p.iv("sizes", out.sizes).iv("table_sizes", cos.sizes).i("start_pos", start);
    e.dispatch(v, {out.resource(), x.resource(), cos.resource(), sin.resource()}, p, out.items());
  }
}

}  // namespace

void add_llm_ops(std::unordered_map<std::string, OpEncoder>& t) {
  t["et_vk.apply_rotary_emb.default"] = rotary;
  t["et_vk.apply_rotary_emb_hf.default"] = rotary;
}

}  // namespace vkc::runtime::vk
