#version 450
// A float tensor to int8 activations (see q8ta_quantize.yaml).
#include "vkc_common.glslh"

layout(local_size_x = LOCAL_SIZE_X, local_size_y = LOCAL_SIZE_Y, local_size_z = LOCAL_SIZE_Z) in;

layout(set = 0, binding = 0, std430) restrict writeonly buffer OutBuf { int t_out[]; };
#if defined(STORAGE_buffer)
layout(set = 0, binding = 1, std430) restrict readonly buffer InBuf { T t_in[]; };
#else
layout(set = 0, binding = 1, IMAGE_FORMAT) uniform restrict readonly IMAGE_T t_in;
#endif

layout(push_constant) uniform Params {
  ivec4 sizes;
  float scale;
  int zero_point;
  int qmin;
  int qmax;
  int in_packed_dim;
  int out_packed_dim;
  int texels_per_item;  // 4 (CPU devices, both packing the same dim) or 1
} p;

#include "vkc_q8ta.glslh"

#if !defined(STORAGE_buffer)
// The word of the texel at `t` (both packing the same dim).
int quantize_texel(ivec3 t) {
  const vec4 x = vec4(imageLoad(t_in, t));
  const ivec4 at = texel_to_whcn(t, p.sizes, p.in_packed_dim);
  const ivec4 lanes = at[p.out_packed_dim] + ivec4(0, 1, 2, 3);
  ivec4 q = clamp(ivec4(clamp(roundEven(x / p.scale), -512.0, 512.0)) + p.zero_point, p.qmin, p.qmax);
  return q8_pack(mix(ivec4(0), q, lessThan(lanes, ivec4(p.sizes[p.out_packed_dim]))));
}
#endif

void main() {
  const int i = global_index();
#if !defined(STORAGE_buffer)
  // CPU devices: an invocation takes 4 consecutive texels along x, neighbouring invocations
  // neighbouring texels (a CPU's SIMD lanes read along the texture's rows rather than across its
  // slices); each word is stored where the int8 layout has it.
  if (p.texels_per_item > 1) {
    ivec3 extents = texture_extents(p.sizes, p.in_packed_dim);
    const int texels_x = extents.x, n = p.texels_per_item;
    extents.x = (extents.x + n - 1) / n;
    if (i >= extents.x * extents.y * extents.z) return;
    const ivec3 pos = index_to_pos(i, extents);
    for (int k = 0; k < n; ++k) {
      const ivec3 t = ivec3(pos.x * n + k, pos.yz);
      if (t.x >= texels_x) break;
      t_out[q8_word(texel_to_whcn(t, p.sizes, p.in_packed_dim), p.sizes, p.out_packed_dim)] = quantize_texel(t);
    }
    return;
  }
#endif
  if (i >= q8_words(p.sizes, p.out_packed_dim)) return;
  const ivec4 at = q8_word_origin(i, p.sizes, p.out_packed_dim);
  ivec4 q = ivec4(0);
#if !defined(STORAGE_buffer)
  // The word's 4 lanes are the 4 lanes of one texel when both pack the same dim: one load.
  if (p.in_packed_dim == p.out_packed_dim) {
    t_out[i] = quantize_texel(whcn_to_texel(at, p.sizes, p.in_packed_dim).xyz);
    return;
  }
#endif
  for (int lane = 0; lane < 4; ++lane) {
    const ivec4 w = at + lane * dim_unit(p.out_packed_dim);
    if (!in_bounds(w, p.sizes)) break;
    const float x = float(TENSOR_AT(t_in, w, p.sizes, p.in_packed_dim));
    q[lane] = clamp(int(clamp(roundEven(x / p.scale), -512.0, 512.0)) + p.zero_point, p.qmin, p.qmax);
  }
  t_out[i] = q8_pack(q);
}
