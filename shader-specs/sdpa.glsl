#version 450
// out[b, h, s, :] = softmax_j(scale * q[b, h, s, :] . k[b, h, j, :] + mask[.., s, j]) v[b, h, j, :],
// as an online softmax (running max and sum, rescaled as they grow), in fp32.
// WHCN: q (D, S, H, B), k (D, L, H, B), v (Dv, L, H, B), out (Dv, S, H, B); the mask broadcasts
// (a size-1 dim reads index 0). Textures are width-packed.
#include "vkc_common.glslh"

layout(local_size_x = LOCAL_SIZE_X, local_size_y = LOCAL_SIZE_Y, local_size_z = LOCAL_SIZE_Z) in;

#if defined(STORAGE_buffer)
layout(set = 0, binding = 0, std430) restrict writeonly buffer OutBuf { T t_out[]; };
layout(set = 0, binding = 1, std430) restrict readonly buffer QBuf { T t_q[]; };
layout(set = 0, binding = 2, std430) restrict readonly buffer KBuf { T t_k[]; };
layout(set = 0, binding = 3, std430) restrict readonly buffer VBuf { T t_v[]; };
layout(set = 0, binding = 4, std430) restrict readonly buffer MaskBuf { T t_mask[]; };
#define AT(t, w, sizes) float(t[whcn_to_index(w, sizes)])
#else
layout(set = 0, binding = 0, IMAGE_FORMAT) uniform restrict writeonly IMAGE_T t_out;
layout(set = 0, binding = 1, IMAGE_FORMAT) uniform restrict readonly IMAGE_T t_q;
layout(set = 0, binding = 2, IMAGE_FORMAT) uniform restrict readonly IMAGE_T t_k;
layout(set = 0, binding = 3, IMAGE_FORMAT) uniform restrict readonly IMAGE_T t_v;
layout(set = 0, binding = 4, IMAGE_FORMAT) uniform restrict readonly IMAGE_T t_mask;
float texel_lane(vec4 texel, int lane) { return texel[lane]; }
#define AT(t, w, sizes) texel_lane(vec4(imageLoad(t, whcn_to_texel(w, sizes, 0).xyz)), (w).x & 3)
#endif

layout(push_constant) uniform Params {
  ivec4 out_sizes;
  ivec4 q_sizes;
  ivec4 k_sizes;
  ivec4 v_sizes;
  ivec4 mask_sizes;
  int has_mask;
  float scale;
} p;

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
      score += AT(t_mask, mw, p.mask_sizes);
    }
    vec4 vj = vec4(0.0);
    for (int lane = 0; lane < lanes; ++lane) vj[lane] = AT(t_v, ivec4(o.x + lane, j, o.z, o.w), p.v_sizes);
    softmax_add(s, score, vj);
  }
  return softmax_result(s);
}
