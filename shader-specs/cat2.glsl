#version 450
// Two textures concatenated along `dim` (see cat2.yaml): each output texel from the first input
// below its extent along `dim`, from the second above it.
#include "vkc_common.glslh"

layout(local_size_x = LOCAL_SIZE_X, local_size_y = LOCAL_SIZE_Y, local_size_z = LOCAL_SIZE_Z) in;

#include "vkc_out_in.glslh"
layout(set = 0, binding = 2, IMAGE_FORMAT) uniform restrict readonly IMAGE_T t_other;

layout(push_constant) uniform Params {
  ivec4 out_sizes;
  ivec4 in_sizes;
  ivec4 other_sizes;
  int dim;
  int packed;
} p;

void main() {
  const int i = global_index();
  const ivec3 extents = texture_extents(p.out_sizes, p.packed);
  if (i >= extents.x * extents.y * extents.z) return;
  const ivec3 pos = index_to_pos(i, extents);
  const ivec4 base = texel_to_whcn(pos, p.out_sizes, p.packed);
  const int split = p.in_sizes[p.dim];
  // Whole texels: the 4 lanes come from one input texel when the dim is not the packed one, or
  // the first input's extent along it is a multiple of 4.
  if (p.dim != p.packed || (split & 3) == 0) {
    VEC4_T v;
    if (base[p.dim] < split) {
      v = VEC4_T(imageLoad(t_in, whcn_to_texel(base, p.in_sizes, p.packed).xyz));
    } else {
      const ivec4 b = base - split * dim_unit(p.dim);
      v = VEC4_T(imageLoad(t_other, whcn_to_texel(b, p.other_sizes, p.packed).xyz));
    }
    imageStore(t_out, pos, v);
    return;
  }
  VEC4_T v = VEC4_T(0);
  for (int lane = 0; lane < 4; ++lane) {
    const ivec4 w = base + lane * dim_unit(p.packed);
    if (!in_bounds(w, p.out_sizes)) break;
    if (w[p.dim] < split) {
      const ivec4 t = whcn_to_texel(w, p.in_sizes, p.packed);
      v[lane] = VEC4_T(imageLoad(t_in, t.xyz))[t.w];
    } else {
      const ivec4 t = whcn_to_texel(w - split * dim_unit(p.dim), p.other_sizes, p.packed);
      v[lane] = VEC4_T(imageLoad(t_other, t.xyz))[t.w];
    }
  }
  imageStore(t_out, pos, v);
}
