#version 450
// Int8 activations to a float tensor (see q8ta_dequantize.yaml).
#include "vkc_common.glslh"

layout(local_size_x = LOCAL_SIZE_X, local_size_y = LOCAL_SIZE_Y, local_size_z = LOCAL_SIZE_Z) in;

#if defined(STORAGE_buffer)
layout(set = 0, binding = 0, std430) restrict writeonly buffer OutBuf { T t_out[]; };
#else
layout(set = 0, binding = 0, IMAGE_FORMAT) uniform restrict writeonly IMAGE_T t_out;
#endif
layout(set = 0, binding = 1, std430) restrict readonly buffer InBuf { int t_in[]; };

layout(push_constant) uniform Params {
  ivec4 sizes;
  float scale;
  int zero_point;
  int out_packed_dim;
  int in_packed_dim;
} p;

#include "vkc_q8ta.glslh"

float value(ivec4 w) {
  const int q = bitfieldExtract(t_in[q8_word(w, p.sizes, p.in_packed_dim)], (w[p.in_packed_dim] & 3) * 8, 8);
  return float(q - p.zero_point) * p.scale;
}

void main() {
  const int i = global_index();
#if defined(STORAGE_buffer)
  if (i >= numel(p.sizes)) return;
  t_out[i] = T(value(index_to_whcn(i, p.sizes)));
#else
  const ivec3 extents = texture_extents(p.sizes, p.out_packed_dim);
  if (i >= extents.x * extents.y * extents.z) return;
  const ivec3 pos = index_to_pos(i, extents);
  const ivec4 base = texel_to_whcn(pos, p.sizes, p.out_packed_dim);
  vec4 texel = vec4(0.0);
  // The texel's 4 lanes are the 4 bytes of one word when both pack the same dim: one load.
  if (p.in_packed_dim == p.out_packed_dim) {
    const ivec4 q = q8_unpack(t_in[q8_word(base, p.sizes, p.in_packed_dim)]);
    const ivec4 lanes = base[p.out_packed_dim] + ivec4(0, 1, 2, 3);
    texel = mix(vec4(0.0), vec4(q - p.zero_point) * p.scale, lessThan(lanes, ivec4(p.sizes[p.out_packed_dim])));
    imageStore(t_out, pos, VEC4_T(texel));
    return;
  }
  for (int lane = 0; lane < 4; ++lane) {
    const ivec4 w = base + lane * dim_unit(p.out_packed_dim);
    if (in_bounds(w, p.sizes)) texel[lane] = value(w);
  }
  imageStore(t_out, pos, VEC4_T(texel));
#endif
}
