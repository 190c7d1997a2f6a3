#version 450
// sdpa_with_kv_cache in one dispatch (sdpa_kv_cache_fused.yaml): the new key and value rows into the
// caches and the workgroup-per-row attention over them (vkc_sdpa_kv_cache_wg.glslh, FUSED_UPDATE);
// with SPLIT, several workgroups per row over parts of its keys (the last to finish adds them up).
#include "vkc_common.glslh"

layout(local_size_x = LOCAL_SIZE_X, local_size_y = LOCAL_SIZE_Y, local_size_z = LOCAL_SIZE_Z) in;

#define FUSED_UPDATE 1
#include "vkc_sdpa_kv_cache_io.glslh"

#if ROPE
#if defined(STORAGE_buffer)
layout(set = 0, binding = 7, std430) restrict readonly buffer CosBuf { T t_cos[]; };
layout(set = 0, binding = 8, std430) restrict readonly buffer SinBuf { T t_sin[]; };
#define ROPE_TABLE(t, col, row) float(t[(row) * p.table_sizes.x + (col)])
#else
layout(set = 0, binding = 7, IMAGE_FORMAT) uniform restrict readonly IMAGE_T t_cos;
layout(set = 0, binding = 8, IMAGE_FORMAT) uniform restrict readonly IMAGE_T t_sin;
#define ROPE_TABLE(t, col, row) (vec4(imageLoad(t, ivec3((col) >> 2, row, 0)))[(col) & 3])
#endif
#endif

#if SPLIT
// Flash-decoding (vkc_attention_wg.glslh's WG_SPLIT): per workgroup (row, part) its max and sum
// (texel 0) and unnormalized P.V (texels 1 .. dv4); the last part of a row to finish (a counter
// per row, left at 0 for the next run) rescales and adds them up and writes the output.
#define WG_SPLIT 1
#if ROPE
layout(set = 0, binding = 9, std430) restrict coherent buffer PartialBuf { vec4 t_partial[]; };
layout(set = 0, binding = 10, std430) restrict coherent buffer CountBuf { int t_count[]; };
#else
layout(set = 0, binding = 7, std430) restrict coherent buffer PartialBuf { vec4 t_partial[]; };
layout(set = 0, binding = 8, std430) restrict coherent buffer CountBuf { int t_count[]; };
#endif
int wg_splits() { return p.splits; }
// A row of L keys in parts of at least split_keys keys, at most splits of them.
int wg_split_keys(int keys) { return max(p.split_keys, (keys + p.splits - 1) / p.splits); }
void wg_store(int x4, ivec3 r, vec4 value);
void wg_store_partial(int x4, int wg, vec4 acc, float m, float sum) {
  const int base = wg * (div_up4(p.out_sizes.x) + 1);
  if (x4 == 0) t_partial[base] = vec4(m, sum, 0.0, 0.0);
  t_partial[base + 1 + x4] = acc;
}
shared bool split_last;
shared vec2 split_head[LOCAL_SIZE_X];  // a group of parts' (max, sum)
shared vec4 split_acc[LOCAL_SIZE_X];   // the slices' P.V sums
#define SPLIT_LOADS 4  // P.V texels an invocation loads at once
void wg_split_done(int row, ivec3 r, int parts) {
  const int t = int(gl_LocalInvocationID.x);
  memoryBarrierBuffer();  // this part's results, visible before the count says they are there
  barrier();
  if (t == 0) split_last = atomicAdd(t_count[row], 1) == parts - 1;
  barrier();
  if (!split_last) return;  // (the same for the whole workgroup)
  memoryBarrierBuffer();
  // The parts in groups of LOCAL_SIZE_X, each group's loads issued together (an invocation a
  // part's max and sum; then invocation (texel, slice) SPLIT_LOADS parts' P.V texels at a time), not
  // one part after another: the row's parts are rescaled to the running max and added up.
  const int dv4 = div_up4(p.out_sizes.x), stride = dv4 + 1, first = row * p.splits;
  const int slices = LOCAL_SIZE_X / dv4, tex = t % dv4, slice = t / dv4;
  const float NEG_INF = -1.0 / 0.0;
  float m = NEG_INF, sum = 0.0;
  vec4 acc = vec4(0.0);
  for (int g0 = 0; g0 < parts; g0 += LOCAL_SIZE_X) {
    const int n = min(LOCAL_SIZE_X, parts - g0);
    split_head[t] = t < n ? t_partial[(first + g0 + t) * stride].xy : vec2(NEG_INF, 0.0);
    // The first P.V texels in flight with the maxima and sums (they do not depend on them).
    vec4 v[SPLIT_LOADS];
    for (int u = 0; u < SPLIT_LOADS; ++u)
      v[u] = slice < slices ? t_partial[(first + g0 + min(slice + u * slices, n - 1)) * stride + 1 + tex] : vec4(0.0);
    barrier();
    float gm = NEG_INF;
    for (int i = 0; i < n; ++i) gm = max(gm, split_head[i].x);
    const float new_m = max(m, gm), alpha = m == NEG_INF ? 0.0 : exp(m - new_m);
    float gs = 0.0;
    for (int i = 0; i < n; ++i) gs += split_head[i].y * exp(split_head[i].x - new_m);
    vec4 a = vec4(0.0);
    if (slice < slices)
      for (int i0 = slice; i0 < n; i0 += SPLIT_LOADS * slices) {
        if (i0 != slice)
          for (int u = 0; u < SPLIT_LOADS; ++u)
            v[u] = t_partial[(first + g0 + min(i0 + u * slices, n - 1)) * stride + 1 + tex];
        for (int u = 0; u < SPLIT_LOADS; ++u)
          if (i0 + u * slices < n) a += v[u] * exp(split_head[i0 + u * slices].x - new_m);
      }
    sum = sum * alpha + gs;
    acc = acc * alpha + a;
    m = new_m;
    barrier();  // split_head read by all before the next group writes it
  }
  split_acc[t] = acc;
  barrier();
  if (t < dv4) {
    vec4 out_texel = vec4(0.0);
    for (int k = 0; k < slices; ++k) out_texel += split_acc[k * dv4 + t];
    wg_store(t, r, out_texel / sum);
  }
  if (t == 0) t_count[row] = 0;
}
#endif

#include "vkc_sdpa_kv_cache_wg.glslh"
