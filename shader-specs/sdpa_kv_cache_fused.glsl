#version 450
// sdpa_with_kv_cache in one dispatch (sdpa_kv_cache_fused.yaml): the new key and value rows into the
// caches and the workgroup-per-row attention over them (vkc_sdpa_kv_cache_wg.glslh, FUSED_UPDATE).
#include "vkc_common.glslh"

layout(local_size_x = LOCAL_SIZE_X, local_size_y = LOCAL_SIZE_Y, local_size_z = LOCAL_SIZE_Z) in;

#if defined(STORAGE_buffer)
layout(set = 0, binding = 0, std430) restrict writeonly buffer OutBuf { T t_out[]; };
layout(set = 0, binding = 1, std430) restrict readonly buffer QBuf { T t_q[]; };
layout(set = 0, binding = 5, std430) restrict readonly buffer NewKBuf { T t_new_k[]; };
layout(set = 0, binding = 6, std430) restrict readonly buffer NewVBuf { T t_new_v[]; };
#else
layout(set = 0, binding = 0, IMAGE_FORMAT) uniform restrict writeonly IMAGE_T t_out;
layout(set = 0, binding = 1, IMAGE_FORMAT) uniform restrict readonly IMAGE_T t_q;
layout(set = 0, binding = 5, IMAGE_FORMAT) uniform restrict readonly IMAGE_T t_new_k;
layout(set = 0, binding = 6, IMAGE_FORMAT) uniform restrict readonly IMAGE_T t_new_v;
#endif
layout(set = 0, binding = 2, std430) restrict buffer KBuf { T t_k[]; };
layout(set = 0, binding = 3, std430) restrict buffer VBuf { T t_v[]; };
layout(set = 0, binding = 4, std430) restrict readonly buffer PosBuf { int t_pos[]; };

layout(push_constant) uniform Params {
  ivec4 out_sizes;
  int kv_heads;
  int cache_rows;
  int pos_index;
  int out_merge;  // 1: write the view [1, S, Hq * D] of the output that alone reads it (textures)
  ivec4 table_sizes;  // ROPE: the cos/sin tables' WHCN sizes (x = cols)
  int rope_start;     // ROPE: the table row of query row 0
} p;

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

#define FUSED_UPDATE 1
#include "vkc_sdpa_kv_cache_wg.glslh"
