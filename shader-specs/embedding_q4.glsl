#version 450
// out[..., d] = q4(table[indices[...], d]) * scales[row, d / group]: out's WHCN (d, a, b, c) reads
// indices at WHCN (a, b, c, 0). Indices are int32; one outside [0, V) gives 0.
#include "vkc_common.glslh"

layout(local_size_x = LOCAL_SIZE_X, local_size_y = LOCAL_SIZE_Y, local_size_z = LOCAL_SIZE_Z) in;

#if defined(STORAGE_buffer)
layout(set = 0, binding = 0, std430) restrict writeonly buffer OutBuf { T t_out[]; };
layout(set = 0, binding = 1, std430) restrict readonly buffer IdxBuf { int t_idx[]; };
#else
layout(set = 0, binding = 0, IMAGE_FORMAT) uniform restrict writeonly IMAGE_T t_out;
layout(set = 0, binding = 1, rgba32i) uniform restrict readonly iimage3D t_idx;
#endif
layout(set = 0, binding = 2, std430) restrict readonly buffer WeightBuf { uint t_weight[]; };
layout(set = 0, binding = 3, std430) restrict readonly buffer ScalesBuf { float t_scales[]; };

layout(push_constant) uniform Params {
  ivec4 out_sizes;
  ivec4 idx_sizes;
  int out_packed_dim;
  int idx_packed_dim;
  int rows;
  int group;
} p;

#include "vkc_q4.glslh"

float lookup(ivec4 w) {
  const ivec4 iw = ivec4(w.yzw, 0);
#if defined(STORAGE_buffer)
  const int row = t_idx[whcn_to_index(iw, p.idx_sizes)];
#else
  const ivec4 tx = whcn_to_texel(iw, p.idx_sizes, p.idx_packed_dim);
  const int row = imageLoad(t_idx, tx.xyz)[tx.w];
#endif
  const int d = p.out_sizes.x;
  return row >= 0 && row < p.rows ? float(q4_at(row, w.x, d)) * t_scales[row * (d / p.group) + w.x / p.group] : 0.0;
}

void main() {
  const int i = global_index();
#if defined(STORAGE_buffer)
  if (i >= numel(p.out_sizes)) return;
  t_out[i] = T(lookup(index_to_whcn(i, p.out_sizes)));
#else
  const ivec3 extents = texture_extents(p.out_sizes, p.out_packed_dim);
  if (i >= extents.x * extents.y * extents.z) return;
  const ivec3 pos = index_to_pos(i, extents);
  const ivec4 base = texel_to_whcn(pos, p.out_sizes, p.out_packed_dim);
  vec4 y = vec4(0.0);
  for (int l = 0; l < 4; ++l) {
    const ivec4 w = base + l * dim_unit(p.out_packed_dim);
    if (in_bounds(w, p.out_sizes)) y[l] = lookup(w);
  }
  imageStore(t_out, pos, VEC4_T(y));
#endif
}
