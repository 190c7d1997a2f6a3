#version 450
// y = (x - mean) * rsqrt(var + eps) * w + b over W (RMS: mean 0, b = 0), a workgroup per row unit:
// a buffer row, or a texture texel column (width-packed: one row of W/4 texels; otherwise 4 rows,
// one per texel lane). Two reductions (the mean, then the squared deviations) in shared memory.
#include "vkc_common.glslh"

#include "vkc_layer_norm_io.glslh"

shared vec4 partial[LOCAL_SIZE_X];

// The workgroup's sum of every invocation's `v`.
vec4 workgroup_sum(vec4 v) {
  const int t = int(gl_LocalInvocationID.x);
  partial[t] = v;
  barrier();
  for (int stride = LOCAL_SIZE_X / 2; stride > 0; stride /= 2) {
    if (t < stride) partial[t] += partial[t + stride];
    barrier();
  }
  const vec4 total = partial[0];
  barrier();  // partial is reused by the next call
  return total;
}

void main() {
  const int unit = global_index() / LOCAL_SIZE_X;
  const int t = int(gl_LocalInvocationID.x);
  const int len = p.sizes.x;
  ivec4 rows = p.sizes;
  rows.x = 1;
#if defined(STORAGE_buffer)
  const bool live = unit < numel(rows);
  const int start = live ? whcn_to_index(index_to_whcn(unit, rows), p.sizes) : 0;
  const int n = live ? len : 0;
  vec4 s = vec4(0.0);
  for (int k = t; k < n; k += LOCAL_SIZE_X) s.x += float(t_in[start + k]);
  const float mean = RMS != 0 ? 0.0 : workgroup_sum(s).x / float(len);
  vec4 q = vec4(0.0);
  for (int k = t; k < n; k += LOCAL_SIZE_X) {
    const float d = float(t_in[start + k]) - mean;
    q.x += d * d;
  }
  const float rstd = inversesqrt(workgroup_sum(q).x / float(len) + p.eps);
  for (int k = t; k < n; k += LOCAL_SIZE_X)
    t_out[start + k] = T((float(t_in[start + k]) - mean) * rstd * float(t_weight[k]) + float(t_bias[k]));
#else
  const ivec3 extents = texture_extents(rows, p.packed_dim);
  const bool live = unit < extents.x * extents.y * extents.z;
  const ivec4 base = texel_to_whcn(index_to_pos(live ? unit : 0, extents), rows, p.packed_dim);
  const ivec4 along = dim_unit(0);
  const bool width = p.packed_dim == 0;
  // Width-packed: invocation t walks texels t, t + 64, ... of the row (4 elements each); otherwise
  // positions t, t + 64, ... along W, each texel holding 4 rows.
  const int steps = live ? (width ? div_up4(len) : len) : 0;
  const ivec4 stride = width ? 4 * along : along;
  vec4 s = vec4(0.0);
  for (int k = t; k < steps; k += LOCAL_SIZE_X) {
    const vec4 x = vec4(imageLoad(t_in, whcn_to_texel(base + k * stride, p.sizes, p.packed_dim).xyz));
    if (width) {
      for (int l = 0; l < 4 && 4 * k + l < len; ++l) s.x += x[l];
    } else {
      s += x;
    }
  }
  vec4 mean = vec4(0.0);
  if (RMS == 0) {
    const vec4 total = workgroup_sum(s) / float(len);
    mean = width ? vec4(total.x) : total;
  }
  vec4 q = vec4(0.0);
  for (int k = t; k < steps; k += LOCAL_SIZE_X) {
    const vec4 d = vec4(imageLoad(t_in, whcn_to_texel(base + k * stride, p.sizes, p.packed_dim).xyz)) - mean;
    if (width) {
      for (int l = 0; l < 4 && 4 * k + l < len; ++l) q.x += d[l] * d[l];
    } else {
      q += d * d;
    }
  }
  const vec4 var = workgroup_sum(q) / float(len);
  const vec4 rstd = inversesqrt((width ? vec4(var.x) : var) + p.eps);
  for (int k = t; k < steps; k += LOCAL_SIZE_X) {
    const ivec3 pos = whcn_to_texel(base + k * stride, p.sizes, p.packed_dim).xyz;
    const vec4 x = vec4(imageLoad(t_in, pos));
    vec4 y = vec4(0.0);
    if (width) {
      for (int l = 0; l < 4 && 4 * k + l < len; ++l)
        y[l] = (x[l] - mean[l]) * rstd[l] * float(t_weight[4 * k + l]) + float(t_bias[4 * k + l]);
    } else {
      y = (x - mean) * rstd * float(t_weight[k]) + float(t_bias[k]);
    }
    imageStore(t_out, pos, VEC4_T(y));
  }
#endif
}
