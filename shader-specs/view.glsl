#version 450
// view_copy: the same elements in row-major (NCHW) order under new sizes.
// Output element o -> linear index in out -> the input element with that linear index.
// Dispatch: one invocation per output element (buffer) or output texel (texture3d).
#include "vkc_common.glslh"

layout(local_size_x = LOCAL_SIZE_X, local_size_y = LOCAL_SIZE_Y, local_size_z = LOCAL_SIZE_Z) in;

#include "vkc_out_in.glslh"

layout(push_constant) uniform Params {
  ivec4 out_sizes;
  ivec4 in_sizes;
  ivec2 packed_dims;  // textures: (out, in)
} p;

void main() {
  const int idx = global_index();
#if defined(STORAGE_buffer)
  if (idx >= numel(p.out_sizes)) return;
  t_out[idx] = t_in[idx];  // contiguous: a view keeps the linear order
#else
  const ivec3 extents = texture_extents(p.out_sizes, p.packed_dims.x);
  if (idx >= extents.x * extents.y * extents.z) return;
  const ivec3 pos = index_to_pos(idx, extents);
  const ivec4 base = texel_to_whcn(pos, p.out_sizes, p.packed_dims.x);
  VEC4_T v = VEC4_T(0);
  for (int lane = 0; lane < 4; ++lane) {
    const ivec4 o = base + lane * dim_unit(p.packed_dims.x);
    if (!in_bounds(o, p.out_sizes)) break;
    const ivec4 t = whcn_to_texel(index_to_whcn(whcn_to_index(o, p.out_sizes), p.in_sizes), p.in_sizes, p.packed_dims.y);
    v[lane] = VEC4_T(imageLoad(t_in, t.xyz))[t.w];
  }
  imageStore(t_out, pos, v);
#endif
}
