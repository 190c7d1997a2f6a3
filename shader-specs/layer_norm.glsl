#version 450
// Layer norm over W (the last dim): out = (x - mean) * inversesqrt(var + eps) * weight[w] + bias[w],
// mean and the biased variance over each row of W elements (two passes, then the write).
// RMS 1 (RMSNorm): mean is taken as 0, so var is mean(x^2).
// weight and bias are constants of W elements (the runtime binds ones / zeros when absent).
// Each invocation owns whole rows, as in softmax.glsl:
// - buffer: one row;
// - texture, W not packed: the 4 rows sharing texels (vectorized across lanes);
// - texture, W packed: one row spread over ceil(W / 4) texels.
#include "vkc_common.glslh"

#include "vkc_layer_norm_io.glslh"

void main() {
  const int i = global_index();
  const int len = p.sizes.x;
  ivec4 rows = p.sizes;
  rows.x = 1;
#if defined(STORAGE_buffer)
  if (i >= numel(rows)) return;
  const int start = whcn_to_index(index_to_whcn(i, rows), p.sizes);
  float mean = 0.0;
  for (int k = 0; k < len; ++k) mean += float(t_in[start + k]);
  mean = RMS != 0 ? 0.0 : mean / float(len);
  float var = 0.0;
  for (int k = 0; k < len; ++k) {
    const float d = float(t_in[start + k]) - mean;
    var += d * d;
  }
  const float rstd = inversesqrt(var / float(len) + p.eps);
  for (int k = 0; k < len; ++k)
    t_out[start + k] = T((float(t_in[start + k]) - mean) * rstd * float(t_weight[k]) + float(t_bias[k]));
#else
  const ivec3 extents = texture_extents(rows, p.packed_dim);
  if (i >= extents.x * extents.y * extents.z) return;
  const ivec4 base = texel_to_whcn(index_to_pos(i, extents), rows, p.packed_dim);
  const ivec4 along = dim_unit(0);
  if (p.packed_dim != 0) {
    vec4 mean = vec4(0.0);
    for (int k = 0; k < len; ++k) mean += vec4(imageLoad(t_in, whcn_to_texel(base + k * along, p.sizes, p.packed_dim).xyz));
    mean = RMS != 0 ? vec4(0.0) : mean / float(len);
    vec4 var = vec4(0.0);
    for (int k = 0; k < len; ++k) {
      const vec4 d = vec4(imageLoad(t_in, whcn_to_texel(base + k * along, p.sizes, p.packed_dim).xyz)) - mean;
      var += d * d;
    }
    const vec4 rstd = inversesqrt(var / float(len) + p.eps);
    for (int k = 0; k < len; ++k) {
      const ivec3 pos = whcn_to_texel(base + k * along, p.sizes, p.packed_dim).xyz;
      const vec4 y = (vec4(imageLoad(t_in, pos)) - mean) * rstd * float(t_weight[k]) + float(t_bias[k]);
      imageStore(t_out, pos, VEC4_T(y));
    }
  } else {
    const int texels = div_up4(len);
    float mean = 0.0;
    for (int t = 0; t < texels; ++t) {
      const vec4 x = vec4(imageLoad(t_in, whcn_to_texel(base + 4 * t * along, p.sizes, p.packed_dim).xyz));
      for (int l = 0; l < 4 && 4 * t + l < len; ++l) mean += x[l];
    }
    mean = RMS != 0 ? 0.0 : mean / float(len);
    float var = 0.0;
    for (int t = 0; t < texels; ++t) {
      const vec4 x = vec4(imageLoad(t_in, whcn_to_texel(base + 4 * t * along, p.sizes, p.packed_dim).xyz));
      for (int l = 0; l < 4 && 4 * t + l < len; ++l) var += (x[l] - mean) * (x[l] - mean);
    }
    const float rstd = inversesqrt(var / float(len) + p.eps);
    for (int t = 0; t < texels; ++t) {
      const ivec3 pos = whcn_to_texel(base + 4 * t * along, p.sizes, p.packed_dim).xyz;
      const vec4 x = vec4(imageLoad(t_in, pos));
      vec4 y = vec4(0.0);
      for (int l = 0; l < 4 && 4 * t + l < len; ++l)
        y[l] = (x[l] - mean) * rstd * float(t_weight[4 * t + l]) + float(t_bias[4 * t + l]);
      imageStore(t_out, pos, VEC4_T(y));
    }
  }
#endif
}
