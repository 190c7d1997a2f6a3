#version 450
// sdpa_with_kv_cache in one dispatch (sdpa_kv_cache_fused.yaml): the new key and value rows into the
// caches and the workgroup-per-row attention over them (vkc_sdpa_kv_cache_wg.glslh, FUSED_UPDATE);
// with SPLIT, several workgroups per row over parts of its keys (sdpa_split_combine adds them up).
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
// (texel 0) and unnormalized P.V (texels 1 .. dv4), for sdpa_split_combine.
#define WG_SPLIT 1
#if ROPE
layout(set = 0, binding = 9, std430) restrict writeonly buffer PartialBuf { vec4 t_partial[]; };
#else
layout(set = 0, binding = 7, std430) restrict writeonly buffer PartialBuf { vec4 t_partial[]; };
#endif
int wg_splits() { return p.splits; }
int wg_split_keys() { return p.split_keys; }
void wg_store(int x4, ivec3 r, vec4 value);
void wg_store_partial(int x4, int wg, vec4 acc, float m, float sum) {
  // (splits is 2 or more here: the output, bound as the spec declares it, is never written)
  if (p.splits == 0) wg_store(x4, ivec3(0), acc);
  const int base = wg * (div_up4(p.out_sizes.x) + 1);
  if (x4 == 0) t_partial[base] = vec4(m, sum, 0.0, 0.0);
  t_partial[base + 1 + x4] = acc;
}
#endif

#include "vkc_sdpa_kv_cache_wg.glslh"
