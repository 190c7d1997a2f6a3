#version 450
// Softmax along one dim: out = exp(x - max) / sum(exp(x - max)) over each row along `dim`
// (LOG: out = x - max - log(sum(exp(x - max)))).
// Each invocation owns whole rows, so every output texel is written by one invocation:
// - buffer: one row;
// - texture, dim != packed dim: the 4 rows sharing texels (vectorized across lanes);
// - texture, dim == packed dim: one row spread over ceil(L / 4) texels.
// Dispatch: one invocation per element (buffer) / texel (texture) of the tensor with
// sizes[dim] set to 1.
#include "vkc_common.glslh"

layout(local_size_x = LOCAL_SIZE_X, local_size_y = LOCAL_SIZE_Y, local_size_z = LOCAL_SIZE_Z) in;

#include "vkc_out_in.glslh"

#include "vkc_softmax.glslh"

void main() {
  const int i = global_index();
  const int len = p.sizes[p.dim];
  ivec4 rows = p.sizes;
  rows[p.dim] = 1;
#if defined(STORAGE_buffer)
  if (i >= numel(rows)) return;
  const int start = whcn_to_index(index_to_whcn(i, rows), p.sizes);
  const int stride = whcn_to_index(dim_unit(p.dim), p.sizes);
  float m = -3.402823466e38;
  for (int k = 0; k < len; ++k) m = max(m, float(t_in[start + k * stride]));
  float s = 0.0;
  for (int k = 0; k < len; ++k) s += exp(float(t_in[start + k * stride]) - m);
  for (int k = 0; k < len; ++k) t_out[start + k * stride] = T(SOFTMAX_OUT(float(t_in[start + k * stride]), m, s));
#else
  const ivec3 extents = texture_extents(rows, p.packed_dim);
  if (i >= extents.x * extents.y * extents.z) return;
  const ivec4 base = texel_to_whcn(index_to_pos(i, extents), rows, p.packed_dim);
  const ivec4 along = dim_unit(p.dim);
  if (p.dim != p.packed_dim) {
    vec4 m = vec4(-3.402823466e38);
    for (int k = 0; k < len; ++k) m = max(m, vec4(imageLoad(t_in, whcn_to_texel(base + k * along, p.sizes, p.packed_dim).xyz)));
    vec4 s = vec4(0.0);
    for (int k = 0; k < len; ++k) s += exp(vec4(imageLoad(t_in, whcn_to_texel(base + k * along, p.sizes, p.packed_dim).xyz)) - m);
    for (int k = 0; k < len; ++k) {
      const ivec3 pos = whcn_to_texel(base + k * along, p.sizes, p.packed_dim).xyz;
      imageStore(t_out, pos, VEC4_T(SOFTMAX_OUT(vec4(imageLoad(t_in, pos)), m, s)));
    }
  } else {
    const int texels = div_up4(len);
    float m = -3.402823466e38;
    for (int t = 0; t < texels; ++t) {
      const vec4 x = vec4(imageLoad(t_in, whcn_to_texel(base + 4 * t * along, p.sizes, p.packed_dim).xyz));
      for (int l = 0; l < 4 && 4 * t + l < len; ++l) m = max(m, x[l]);
    }
    float s = 0.0;
    for (int t = 0; t < texels; ++t) {
      const vec4 x = vec4(imageLoad(t_in, whcn_to_texel(base + 4 * t * along, p.sizes, p.packed_dim).xyz));
      for (int l = 0; l < 4 && 4 * t + l < len; ++l) s += exp(x[l] - m);
    }
    for (int t = 0; t < texels; ++t) {
      const ivec3 pos = whcn_to_texel(base + 4 * t * along, p.sizes, p.packed_dim).xyz;
      vec4 y = SOFTMAX_OUT(vec4(imageLoad(t_in, pos)), m, s);
      for (int l = 0; l < 4; ++l)
        if (4 * t + l >= len) y[l] = 0.0;
      imageStore(t_out, pos, VEC4_T(y));
    }
  }
#endif
}
