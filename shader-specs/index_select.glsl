#version 450
// out (WHCN w) = in (w with w[dim] = index[w[dim]]); negative indices count from the end; one
// outside the input gives 0.
#include "vkc_common.glslh"

layout(local_size_x = LOCAL_SIZE_X, local_size_y = LOCAL_SIZE_Y, local_size_z = LOCAL_SIZE_Z) in;

#include "vkc_out_in.glslh"
#if defined(STORAGE_buffer)
layout(set = 0, binding = 2, std430) restrict readonly buffer IndexBuf { int t_index[]; };
#else
layout(set = 0, binding = 2, rgba32i) uniform restrict readonly iimage3D t_index;
#endif

layout(push_constant) uniform Params {
  ivec4 out_sizes;
  ivec4 in_sizes;
  ivec4 index_sizes;
  ivec4 packed_dims;  // out, in, index
  int dim;
} p;

int index_at(int j) {
#if defined(STORAGE_buffer)
  return t_index[j];
#else
  const ivec4 t = whcn_to_texel(ivec4(j, 0, 0, 0), p.index_sizes, p.packed_dims.z);
  return imageLoad(t_index, t.xyz)[t.w];
#endif
}

SCALAR_T source(ivec4 w) {
  ivec4 s = w;
  const int j = index_at(w[p.dim]);
  s[p.dim] = j < 0 ? j + p.in_sizes[p.dim] : j;  // negative indices count from the end (ONNX Gather)
  if (!in_bounds(s, p.in_sizes)) return SCALAR_T(0);
#if defined(STORAGE_buffer)
  return SCALAR_T(t_in[whcn_to_index(s, p.in_sizes)]);
#else
  const ivec4 t = whcn_to_texel(s, p.in_sizes, p.packed_dims.y);
  return SCALAR_T(imageLoad(t_in, t.xyz)[t.w]);
#endif
}

void main() {
  const int i = global_index();
#if defined(STORAGE_buffer)
  if (i >= numel(p.out_sizes)) return;
  t_out[i] = T(source(index_to_whcn(i, p.out_sizes)));
#else
  const ivec3 extents = texture_extents(p.out_sizes, p.packed_dims.x);
  if (i >= extents.x * extents.y * extents.z) return;
  const ivec3 pos = index_to_pos(i, extents);
  const ivec4 base = texel_to_whcn(pos, p.out_sizes, p.packed_dims.x);
  VEC4_T y = VEC4_T(0);
  for (int lane = 0; lane < 4; ++lane) {
    const ivec4 w = base + lane * dim_unit(p.packed_dims.x);
    if (in_bounds(w, p.out_sizes)) y[lane] = source(w);
  }
  imageStore(t_out, pos, y);
#endif
}
