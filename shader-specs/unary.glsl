#version 450
// Element-wise unary operators: out = OPERATOR over every element.
// OPERATOR is an expression in X (the input as VEC4_T) and the push constants A and B.
// Buffer variants: one invocation per element (range.x = numel). Texture variants: one
// invocation per texel (range.xyz = texture extents); any packing, padding lanes included.
#include "vkc_common.glslh"
#include "vkc_math.glslh"

layout(local_size_x = LOCAL_SIZE_X, local_size_y = LOCAL_SIZE_Y, local_size_z = LOCAL_SIZE_Z) in;

#include "vkc_out_in.glslh"

layout(push_constant) uniform Params {
  ivec4 range;
  float a;
  float b;
} p;

#define A (p.a)
#define B (p.b)

void main() {
  const int i = global_index();
#if defined(STORAGE_buffer)
  if (i >= p.range.x) return;
  const VEC4_T X = VEC4_T(SCALAR_T(t_in[i]));
  const VEC4_T r = OPERATOR;
  t_out[i] = T(r.x);
#else
  if (i >= p.range.x * p.range.y * p.range.z) return;
  const ivec3 pos = index_to_pos(i, p.range.xyz);
  const VEC4_T X = VEC4_T(imageLoad(t_in, pos));
  const VEC4_T r = OPERATOR;
  imageStore(t_out, pos, r);
#endif
}
