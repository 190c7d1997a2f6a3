#version 450
// sdpa_with_kv_cache in one dispatch (sdpa_kv_cache_fused.yaml): the new key and value rows into the
// caches and the workgroup-per-row attention over them (vkc_sdpa_kv_cache_wg.glslh, FUSED_UPDATE).
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

#include "vkc_sdpa_kv_cache_wg.glslh"
