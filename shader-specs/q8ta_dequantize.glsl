#version 450
// Int8 activations to a float tensor (see q8ta_dequantize.yaml).
#include "vkc_common.glslh"

layout(local_size_x = LOCAL_SIZE_X, local_size_y = LOCAL_SIZE_Y, local_size_z = LOCAL_SIZE_Z) in;

#include "vkc_out.glslh"
layout(set = 0, binding = 1, std430) restrict readonly buffer InBuf { int t_in[]; };

layout(push_constant) uniform Params {
  ivec4 sizes;
  float scale;
  int zero_point;
  int out_packed_dim;
  int in_packed_dim;
  int texels_per_item;  // 4 (CPU devices, both packing the same dim) or 1
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
  // Both packing the same dim: each word is a texel. On CPU devices an invocation takes 4
  // consecutive texels along x (texels_per_item: fewer invocations for the same stores; lavapipe's
  // dequantizations in squeezenet1_1 int8 13-14 -> 8-9 ms); otherwise one texel, lane by lane.
  const bool words = p.in_packed_dim == p.out_packed_dim;
  ivec3 extents = texture_extents(p.sizes, p.out_packed_dim);
  const int texels_x = extents.x, n = words ? p.texels_per_item : 1;
  extents.x = (extents.x + n - 1) / n;
  if (i >= extents.x * extents.y * extents.z) return;
  const ivec3 pos = index_to_pos(i, extents);
  if (words) {
    for (int k = 0; k < n; ++k) {
      const ivec3 at = ivec3(pos.x * n + k, pos.yz);
      if (at.x >= texels_x) break;
      const ivec4 base = texel_to_whcn(at, p.sizes, p.out_packed_dim);
      const ivec4 q = q8_unpack(t_in[q8_word(base, p.sizes, p.in_packed_dim)]);
      const ivec4 lanes = base[p.out_packed_dim] + ivec4(0, 1, 2, 3);
      imageStore(t_out, at, VEC4_T(mix(vec4(0.0), vec4(q - p.zero_point) * p.scale,
                                       lessThan(lanes, ivec4(p.sizes[p.out_packed_dim])))));
    }
    return;
  }
  const ivec4 base = texel_to_whcn(pos, p.sizes, p.out_packed_dim);
  vec4 texel = vec4(0.0);
  for (int lane = 0; lane < 4; ++lane) {
    const ivec4 w = base + lane * dim_unit(p.out_packed_dim);
    if (in_bounds(w, p.sizes)) texel[lane] = value(w);
  }
  imageStore(t_out, pos, VEC4_T(texel));
#endif
}
