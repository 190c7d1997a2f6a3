#version 450
// out[b, h, s, :] = softmax_j(scale * q[b, h, s, :] . k[b, h, j, :] + mask[.., s, j]) v[b, h, j, :],
// as an online softmax (running max and sum, rescaled as they grow), in fp32.
// WHCN: q (D, S, H, B), k (D, L, H, B), v (Dv, L, H, B), out (Dv, S, H, B); the mask broadcasts
// (a size-1 dim reads index 0). Textures are width-packed.
#include "vkc_common.glslh"

layout(local_size_x = LOCAL_SIZE_X, local_size_y = LOCAL_SIZE_Y, local_size_z = LOCAL_SIZE_Z) in;

#include "vkc_sdpa_io.glslh"
#include "vkc_attention.glslh"

vec4 attend(ivec4 o, int lanes) {
  const int d = p.q_sizes.x, l = p.k_sizes.y;
  OnlineSoftmax s = softmax_start();
  for (int j = 0; j < l; ++j) {
    float dot_qk = 0.0;
    for (int c = 0; c < d; ++c) dot_qk += AT(t_q, ivec4(c, o.y, o.z, o.w), p.q_sizes) * AT(t_k, ivec4(c, j, o.z, o.w), p.k_sizes);
    float score = dot_qk * p.scale;
    if (p.has_mask != 0) {
      const ivec4 mw = min(ivec4(j, o.y, o.z, o.w), p.mask_sizes - 1);
      score += MASK_AT(mw);
    }
    vec4 vj = vec4(0.0);
    for (int lane = 0; lane < lanes; ++lane) vj[lane] = AT(t_v, ivec4(o.x + lane, j, o.z, o.w), p.v_sizes);
    softmax_add(s, score, vj);
  }
  return softmax_result(s);
}
