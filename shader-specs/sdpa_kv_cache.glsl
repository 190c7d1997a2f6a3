#version 450
// WHCN: q and out (D, Hq, S, 1); caches row-major [C, Hkv, D].
#include "vkc_common.glslh"

layout(local_size_x = LOCAL_SIZE_X, local_size_y = LOCAL_SIZE_Y, local_size_z = LOCAL_SIZE_Z) in;

#if defined(STORAGE_buffer)
layout(set = 0, binding = 0, std430) restrict writeonly buffer OutBuf { T t_out[]; };
layout(set = 0, binding = 1, std430) restrict readonly buffer QBuf { T t_q[]; };
#define Q_AT(w) float(t_q[whcn_to_index(w, p.out_sizes)])
#else
layout(set = 0, binding = 0, IMAGE_FORMAT) uniform restrict writeonly IMAGE_T t_out;
layout(set = 0, binding = 1, IMAGE_FORMAT) uniform restrict readonly IMAGE_T t_q;
float texel_lane(vec4 texel, int lane) { return texel[lane]; }
#define Q_AT(w) texel_lane(vec4(imageLoad(t_q, whcn_to_texel(w, p.out_sizes, 0).xyz)), (w).x & 3)
#endif
layout(set = 0, binding = 2, std430) restrict readonly buffer KBuf { T t_k[]; };
layout(set = 0, binding = 3, std430) restrict readonly buffer VBuf { T t_v[]; };
layout(set = 0, binding = 4, std430) restrict readonly buffer PosBuf { int t_pos[]; };

layout(push_constant) uniform Params {
  ivec4 out_sizes;
  int kv_heads;
  int cache_rows;
  int pos_index;
} p;

#if WG
// A workgroup per query row (vkc_attention_wg.glslh): row = s * Hq + h, (s, h, 0) as (x, y, z).
int wg_rows() { return p.out_sizes.y * p.out_sizes.z; }
ivec3 wg_row_of(int row) { return ivec3(row / p.out_sizes.y, row % p.out_sizes.y, 0); }
int wg_keys(ivec3 r) { return min(t_pos[p.pos_index] + r.x, p.cache_rows - 1) + 1; }
int wg_d4() { return div_up4(p.out_sizes.x); }
int wg_dv4() { return div_up4(p.out_sizes.x); }
vec4 wg_q(int c4, ivec3 r) {
#if defined(STORAGE_buffer)
  const int base = whcn_to_index(ivec4(c4 * 4, r.y, r.x, 0), p.out_sizes);
  vec4 v = vec4(0.0);
  for (int l = 0; l < 4; ++l)
    if (c4 * 4 + l < p.out_sizes.x) v[l] = float(t_q[base + l]);
  return v;
#else
  const vec4 v = vec4(imageLoad(t_q, ivec3(c4, r.y, r.x)));
  const int n = p.out_sizes.x - c4 * 4;
  return mix(vec4(0.0), v, bvec4(n > 0, n > 1, n > 2, n > 3));
#endif
}
// Elements 4 * c4 .. 4 * c4 + 3 of cache row (j, the kv head of query head r.y).
#define CACHE_TEXEL(t_cache)                                                      \
  const int d = p.out_sizes.x;                                                    \
  const int base = (j * p.kv_heads + r.y / (p.out_sizes.y / p.kv_heads)) * d + c4 * 4; \
  vec4 v = vec4(0.0);                                                             \
  for (int l = 0; l < 4; ++l)                                                     \
    if (c4 * 4 + l < d) v[l] = float(t_cache[base + l]);                          \
  return v;
vec4 wg_k(int c4, int j, ivec3 r) { CACHE_TEXEL(t_k) }
vec4 wg_v(int c4, int j, ivec3 r) { CACHE_TEXEL(t_v) }
float wg_score(float dot_qk, int j, ivec3 r) { return dot_qk * inversesqrt(float(p.out_sizes.x)); }
void wg_store(int x4, ivec3 r, vec4 value) {
#if defined(STORAGE_buffer)
  const int base = whcn_to_index(ivec4(x4 * 4, r.y, r.x, 0), p.out_sizes);
  for (int l = 0; l < 4; ++l)
    if (x4 * 4 + l < p.out_sizes.x) t_out[base + l] = T(value[l]);
#else
  imageStore(t_out, ivec3(x4, r.y, r.x), VEC4_T(value));
#endif
}
#include "vkc_attention_wg.glslh"
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
