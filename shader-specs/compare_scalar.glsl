#version 450
// out = OPERATOR(X = in, Y = the number) as 0/1 (a bvec4 expression); in and out have one shape.
#include "vkc_in_types.glslh"
#include "vkc_common.glslh"

layout(local_size_x = LOCAL_SIZE_X, local_size_y = LOCAL_SIZE_Y, local_size_z = LOCAL_SIZE_Z) in;

#include "vkc_out_in.glslh"

layout(push_constant) uniform Params {
  ivec4 out_sizes;
  ivec4 packed_dims;
  int other_i;
  float other_f;
} p;

void main() {
  const int i = global_index();
#if defined(IN_DTYPE_i32)
  const IN_VEC4_T Y = IN_VEC4_T(p.other_i);
#else
  const IN_VEC4_T Y = IN_VEC4_T(p.other_f);
#endif
#if defined(STORAGE_buffer)
  if (i >= numel(p.out_sizes)) return;
  const IN_VEC4_T X = IN_VEC4_T(t_in[i]);
  t_out[i] = T(ivec4(OPERATOR).x);
#else
  const ivec3 extents = texture_extents(p.out_sizes, p.packed_dims.x);
  if (i >= extents.x * extents.y * extents.z) return;
  const ivec3 pos = index_to_pos(i, extents);
  const IN_VEC4_T X = IN_VEC4_T(imageLoad(t_in, pos));
  imageStore(t_out, pos, VEC4_T(ivec4(OPERATOR)));
#endif
}
