#version 450
// out = OPERATOR(X = in, Y = other) as 0/1 (a bvec4 expression), with binary.glsl's broadcasting.
#include "vkc_in_types.glslh"
#include "vkc_common.glslh"

layout(local_size_x = LOCAL_SIZE_X, local_size_y = LOCAL_SIZE_Y, local_size_z = LOCAL_SIZE_Z) in;

#include "vkc_out_in.glslh"
#if defined(STORAGE_buffer)
layout(set = 0, binding = 2, std430) restrict readonly buffer OtherBuf { IN_T t_other[]; };
#else
layout(set = 0, binding = 2, IN_FORMAT) uniform restrict readonly IN_IMAGE_T t_other;
#endif

layout(push_constant) uniform Params {
  ivec4 out_sizes;
  ivec4 in_sizes;
  ivec4 other_sizes;
  ivec4 packed_dims;
} p;

#include "vkc_broadcast_pair.glslh"

void main() {
  const int i = global_index();
#if defined(STORAGE_buffer)
  if (i >= numel(p.out_sizes)) return;
  const ivec4 w = index_to_whcn(i, p.out_sizes);
  const IN_VEC4_T X = IN_VEC4_T(t_in[whcn_to_index(min(w, p.in_sizes - 1), p.in_sizes)]);
  const IN_VEC4_T Y = IN_VEC4_T(t_other[whcn_to_index(min(w, p.other_sizes - 1), p.other_sizes)]);
  t_out[i] = T(ivec4(OPERATOR).x);
#else
  const ivec3 extents = texture_extents(p.out_sizes, p.packed_dims.x);
  if (i >= extents.x * extents.y * extents.z) return;
  const ivec3 pos = index_to_pos(i, extents);
  IN_VEC4_T X = IN_VEC4_T(0), Y = IN_VEC4_T(0);
  BROADCAST_PAIR(IN_VEC4_T, texel_to_whcn(pos, p.out_sizes, p.packed_dims.x), X, Y)
  imageStore(t_out, pos, VEC4_T(ivec4(OPERATOR)));
#endif
}
