#version 450
// out = the input converted to the output's dtype, element by element (texel by texel).
#include "vkc_in_types.glslh"
#include "vkc_common.glslh"

layout(local_size_x = LOCAL_SIZE_X, local_size_y = LOCAL_SIZE_Y, local_size_z = LOCAL_SIZE_Z) in;

#include "vkc_out_in.glslh"

layout(push_constant) uniform Params {
  ivec4 range;
} p;

void main() {
  const int i = global_index();
#if defined(STORAGE_buffer)
  if (i >= p.range.x) return;
  t_out[i] = T(SCALAR_T(t_in[i]));
#else
  if (i >= p.range.x * p.range.y * p.range.z) return;
  const ivec3 pos = index_to_pos(i, p.range.xyz);
  imageStore(t_out, pos, VEC4_T(imageLoad(t_in, pos)));
#endif
}
