#version 450
// WHCN: q and out (D, Hq, S, 1); caches row-major [C, Hkv, D].
#include "vkc_common.glslh"

layout(local_size_x = LOCAL_SIZE_X, local_size_y = LOCAL_SIZE_Y, local_size_z = LOCAL_SIZE_Z) in;

#include "vkc_sdpa_kv_cache_io.glslh"
#if defined(STORAGE_buffer)
#define Q_AT(w) float(t_q[whcn_to_index(w, p.out_sizes)])
#else
float texel_lane(vec4 texel, int lane) { return texel[lane]; }
#define Q_AT(w) texel_lane(vec4(imageLoad(t_q, whcn_to_texel(w, p.out_sizes, 0).xyz)), (w).x & 3)
#endif

#if WG
#include "vkc_sdpa_kv_cache_wg.glslh"
#else
#include "vkc_attention.glslh"

vec4 attend(ivec4 o, int lanes) {
  const int d = p.out_sizes.x, heads = p.out_sizes.y;
  const int kv = o.y / (heads / p.kv_heads);
  const int last = min(t_pos[p.pos_index] + o.z, p.cache_rows - 1);
  const float scale = inversesqrt(float(d));
  OnlineSoftmax s = softmax_start();
  for (int j = 0; j <= last; ++j) {
    const int row = (j * p.kv_heads + kv) * d;
    float dot_qk = 0.0;
    for (int c = 0; c < d; ++c) dot_qk += Q_AT(ivec4(c, o.y, o.z, 0)) * float(t_k[row + c]);
    vec4 vj = vec4(0.0);
    for (int lane = 0; lane < lanes; ++lane) vj[lane] = float(t_v[row + o.x + lane]);
    softmax_add(s, dot_qk * scale, vj);
  }
  return softmax_result(s);
}
#endif  // WG
