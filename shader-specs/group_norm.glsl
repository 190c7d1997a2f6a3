#version 450
// out = (x - mean[n, g]) * rstd[n, g] * weight[c] + bias[c], g = c / (C / groups) (see the spec).
#include "vkc_common.glslh"

layout(local_size_x = LOCAL_SIZE_X, local_size_y = LOCAL_SIZE_Y, local_size_z = LOCAL_SIZE_Z) in;

#include "vkc_out_in.glslh"
layout(set = 0, binding = 2, std430) restrict readonly buffer WeightBuf { T t_weight[]; };
layout(set = 0, binding = 3, std430) restrict readonly buffer BiasBuf { T t_bias[]; };
layout(set = 0, binding = 4, std430) restrict readonly buffer StatsBuf { float t_stats[]; };

layout(push_constant) uniform Params {
  ivec4 sizes;
  int packed_dim;
  int groups;
} p;

float normalized(ivec4 w, float x) {
  const int pair = w.w * p.groups + w.z / (p.sizes.z / p.groups);
  return (x - t_stats[2 * pair]) * t_stats[2 * pair + 1] * float(t_weight[w.z]) + float(t_bias[w.z]);
}

void main() {
  const int i = global_index();
#if defined(STORAGE_buffer)
  if (i >= numel(p.sizes)) return;
  t_out[i] = T(normalized(index_to_whcn(i, p.sizes), float(t_in[i])));
#else
  const ivec3 extents = texture_extents(p.sizes, p.packed_dim);
  if (i >= extents.x * extents.y * extents.z) return;
  const ivec3 pos = index_to_pos(i, extents);
  const ivec4 base = texel_to_whcn(pos, p.sizes, p.packed_dim);
  const vec4 x = vec4(imageLoad(t_in, pos));
  vec4 y = vec4(0.0);
  for (int lane = 0; lane < 4; ++lane) {
    const ivec4 w = base + lane * dim_unit(p.packed_dim);
    if (in_bounds(w, p.sizes)) y[lane] = normalized(w, x[lane]);
  }
  imageStore(t_out, pos, VEC4_T(y));
#endif
}
