#version 450
// Attention, one workgroup per query row (sdpa_wg.yaml). WHCN: q (D, S, H, B), k (D, L, H, B),
// v (Dv, L, H, B), out (Dv, S, H, B); the mask broadcasts (a size-1 dim reads index 0).
#include "vkc_common.glslh"

layout(local_size_x = LOCAL_SIZE_X, local_size_y = LOCAL_SIZE_Y, local_size_z = LOCAL_SIZE_Z) in;

#include "vkc_sdpa_io.glslh"

#if defined(STORAGE_buffer)
// Elements 4*x4 .. 4*x4+3 of row (y, z, w), zeros past the row's end.
#define DEFINE_LOAD4(name, t)                                                        \
  vec4 name(int x4, int y, int z, int w, ivec4 sz) {                                 \
    const int base = whcn_to_index(ivec4(x4 * 4, y, z, w), sz);                      \
    vec4 r = vec4(0.0);                                                              \
    for (int l = 0; l < 4; ++l)                                                      \
      if (x4 * 4 + l < sz.x) r[l] = float(t[base + l]);                              \
    return r;                                                                        \
  }
#else
// The texel of elements 4*x4 .. 4*x4+3 of row (y, z, w); lanes past the row's end are zero.
#define DEFINE_LOAD4(name, t)                                                        \
  vec4 name(int x4, int y, int z, int w, ivec4 sz) {                                 \
    const vec4 r = vec4(imageLoad(t, ivec3(x4, y, w * sz.z + z)));                   \
    const int n = sz.x - x4 * 4;                                                     \
    return mix(vec4(0.0), r, bvec4(n > 0, n > 1, n > 2, n > 3));                     \
  }
#endif

// Output elements 4*x4 .. 4*x4+3 of row (s, h, b).
void store_out4(int x4, int s, int h, int b, vec4 r) {
#if defined(STORAGE_buffer)
  const int base = whcn_to_index(ivec4(x4 * 4, s, h, b), p.out_sizes);
  for (int l = 0; l < 4; ++l)
    if (x4 * 4 + l < p.out_sizes.x) t_out[base + l] = T(r[l]);
#else
  imageStore(t_out, ivec3(x4, s, b * p.out_sizes.z + h), VEC4_T(r));
#endif
}

DEFINE_LOAD4(load_q, t_q)
DEFINE_LOAD4(load_k, t_k)
DEFINE_LOAD4(load_v, t_v)

#if ROW
// One invocation per query row, for small head dims (D and Dv <= 4 * MAX4): q's row and the
// output row stay in registers, and each key's score is computed once. The workgroup's rows
// (64 query positions of one batch and head) share K and V: tiles of KT keys are loaded into
// shared memory once for all of them.
#define MAX4 8
#define KT 32
shared vec4 k_tile[KT * MAX4];
shared vec4 v_tile[KT * MAX4];
void main() {
  const int t = int(gl_LocalInvocationID.x);
  const int S = p.out_sizes.y, H = p.out_sizes.z;
  const int blocks = (S + LOCAL_SIZE_X - 1) / LOCAL_SIZE_X;
  const int group = global_index() / LOCAL_SIZE_X, bh = group / blocks;
  const bool group_live = bh < H * p.out_sizes.w;  // the same for the whole workgroup
  const int h = bh % H, b = bh / H, s = (group % blocks) * LOCAL_SIZE_X + t;
  const bool live = group_live && s < S;
  const int d4 = div_up4(p.q_sizes.x), dv4 = div_up4(p.v_sizes.x), L = p.k_sizes.y;
  vec4 qr[MAX4], acc[MAX4];
  for (int c = 0; c < MAX4; ++c) {
    qr[c] = live && c < d4 ? load_q(c, s, h, b, p.q_sizes) : vec4(0.0);
    acc[c] = vec4(0.0);
  }
  const float NEG_INF = -1.0 / 0.0;
  float m = NEG_INF, sum = 0.0;
  for (int j0 = 0; j0 < L && group_live; j0 += KT) {
    const int n = min(KT, L - j0);
    for (int i = t; i < n * d4; i += LOCAL_SIZE_X) k_tile[(i / d4) * MAX4 + i % d4] = load_k(i % d4, j0 + i / d4, h, b, p.k_sizes);
    for (int i = t; i < n * dv4; i += LOCAL_SIZE_X) v_tile[(i / dv4) * MAX4 + i % dv4] = load_v(i % dv4, j0 + i / dv4, h, b, p.v_sizes);
    barrier();
    for (int jj = 0; jj < n && live; ++jj) {
      float d = 0.0;
      for (int c = 0; c < MAX4; ++c)
        if (c < d4) d += dot(qr[c], k_tile[jj * MAX4 + c]);
      float sc = d * p.scale;
      if (p.has_mask != 0) sc += MASK_AT(min(ivec4(j0 + jj, s, h, b), p.mask_sizes - 1));
      if (sc == NEG_INF) continue;  // a masked key adds nothing
      const float new_m = max(m, sc);
      const float alpha = m == NEG_INF ? 0.0 : exp(m - new_m), e = exp(sc - new_m);
      sum = sum * alpha + e;
      for (int c = 0; c < MAX4; ++c)
        if (c < dv4) acc[c] = acc[c] * alpha + e * v_tile[jj * MAX4 + c];
      m = new_m;
    }
    barrier();  // the tiles are read by all before the next ones are loaded
  }
  if (!live) return;
  for (int c = 0; c < MAX4; ++c)
    if (c < dv4) store_out4(c, s, h, b, acc[c] / sum);
}
#else
// The workgroup-per-row main (vkc_attention_wg.glslh) over these tensors.
int wg_rows() { return p.out_sizes.y * p.out_sizes.z * p.out_sizes.w; }
ivec3 wg_row_of(int row) {
  const int S = p.out_sizes.y, H = p.out_sizes.z;
  return ivec3(row % S, (row / S) % H, row / (S * H));
}
int wg_keys(ivec3 r) { return p.k_sizes.y; }
int wg_d4() { return div_up4(p.q_sizes.x); }
int wg_dv4() { return div_up4(p.v_sizes.x); }
vec4 wg_q(int c4, ivec3 r) { return load_q(c4, r.x, r.y, r.z, p.q_sizes); }
vec4 wg_k(int c4, int j, ivec3 r) { return load_k(c4, j, r.y, r.z, p.k_sizes); }
vec4 wg_v(int x4, int j, ivec3 r) { return load_v(x4, j, r.y, r.z, p.v_sizes); }
float wg_score(float dot_qk, int j, ivec3 r) {
  float sc = dot_qk * p.scale;
  if (p.has_mask != 0) sc += MASK_AT(min(ivec4(j, r.x, r.y, r.z), p.mask_sizes - 1));
  return sc;
}
void wg_store(int x4, ivec3 r, vec4 value) { store_out4(x4, r.x, r.y, r.z, value); }
#include "vkc_attention_wg.glslh"
#endif  // ROW
