#version 450
// cache[(start_pos + s) * H * D + h * D + d] = value[d, s, h] (WHCN (D, H, S, 1)).
#include "vkc_common.glslh"

layout(local_size_x = LOCAL_SIZE_X, local_size_y = LOCAL_SIZE_Y, local_size_z = LOCAL_SIZE_Z) in;

layout(set = 0, binding = 0, std430) restrict writeonly buffer CacheBuf { T t_cache[]; };
#if defined(STORAGE_buffer)
layout(set = 0, binding = 1, std430) restrict readonly buffer ValueBuf { T t_value[]; };
#else
layout(set = 0, binding = 1, IMAGE_FORMAT) uniform restrict readonly IMAGE_T t_value;
#endif
layout(set = 0, binding = 2, std430) restrict readonly buffer PosBuf { int t_pos[]; };

layout(push_constant) uniform Params {
  ivec4 value_sizes;
  int cache_rows;
  int pos_index;
} p;

void store(ivec4 w, float x) {
  const int row = t_pos[p.pos_index] + w.z;
  if (row < 0 || row >= p.cache_rows) return;
  t_cache[(row * p.value_sizes.y + w.y) * p.value_sizes.x + w.x] = T(x);
}

void main() {
  const int i = global_index();
#if defined(STORAGE_buffer)
  if (i >= numel(p.value_sizes)) return;
  store(index_to_whcn(i, p.value_sizes), float(t_value[i]));
#else
  const ivec3 extents = texture_extents(p.value_sizes, 0);
  if (i >= extents.x * extents.y * extents.z) return;
  const ivec3 pos = index_to_pos(i, extents);
  const ivec4 base = texel_to_whcn(pos, p.value_sizes, 0);
  const vec4 x = vec4(imageLoad(t_value, pos));
  for (int lane = 0; lane < 4 && base.x + lane < p.value_sizes.x; ++lane) store(base + ivec4(lane, 0, 0, 0), x[lane]);
#endif
}
