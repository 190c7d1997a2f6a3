#version 450
// Softmax / log-softmax along one dim with a workgroup per row unit (softmax.glsl's unit: a
// buffer row; 4 rows sharing texels when dim is not the packed dim; one row over ceil(L / 4)
// texels when it is). Its invocations take strided steps along the row; the row max and the sum
// of exp(x - max) are combined in shared memory. For long rows, where one invocation per row
// would run them serially. Dispatch: items = row units * local_size.x.
#include "vkc_common.glslh"

layout(local_size_x = LOCAL_SIZE_X, local_size_y = LOCAL_SIZE_Y, local_size_z = LOCAL_SIZE_Z) in;

#include "vkc_out_in.glslh"

#include "vkc_softmax.glslh"

const float kLowest = -3.402823466e38;
shared vec4 red[LOCAL_SIZE_X];

// Combines every invocation's v (max or sum, lane-wise) into red[0].
void combine(vec4 v, bool is_max) {
  const int t = int(gl_LocalInvocationID.x);
  red[t] = v;
  barrier();
  for (int stride = LOCAL_SIZE_X / 2; stride > 0; stride /= 2) {
    if (t < stride) red[t] = is_max ? max(red[t], red[t + stride]) : red[t] + red[t + stride];
    barrier();
  }
}

void main() {
  const int unit = global_index() / LOCAL_SIZE_X;
  const int t = int(gl_LocalInvocationID.x);
  const int len = p.sizes[p.dim];
  ivec4 rows = p.sizes;
  rows[p.dim] = 1;
#if defined(STORAGE_buffer)
  const bool live = unit < numel(rows);
  const int start = live ? whcn_to_index(index_to_whcn(unit, rows), p.sizes) : 0;
  const int stride = whcn_to_index(dim_unit(p.dim), p.sizes);
  const int steps = live ? len : 0;
  const bool lanes_are_rows = false;
#else
  const ivec3 extents = texture_extents(rows, p.packed_dim);
  const bool live = unit < extents.x * extents.y * extents.z;
  const ivec4 base = texel_to_whcn(index_to_pos(live ? unit : 0, extents), rows, p.packed_dim);
  const ivec4 along = dim_unit(p.dim);
  const bool lanes_are_rows = p.dim != p.packed_dim;
  const int step_len = lanes_are_rows ? 1 : 4;  // elements per step along the row
  const int steps = live ? (lanes_are_rows ? len : div_up4(len)) : 0;
#define POS(k) whcn_to_texel(base + (k) * step_len * along, p.sizes, p.packed_dim).xyz
#endif
  vec4 m = vec4(kLowest);
  for (int k = t; k < steps; k += LOCAL_SIZE_X) {
#if defined(STORAGE_buffer)
    m.x = max(m.x, float(t_in[start + k * stride]));
#else
    vec4 x = vec4(imageLoad(t_in, POS(k)));
    if (!lanes_are_rows)
      for (int l = 0; l < 4; ++l)
        if (4 * k + l >= len) x[l] = kLowest;
    m = max(m, x);
#endif
  }
  combine(m, true);
  vec4 row_max = red[0];
  if (!lanes_are_rows) row_max = vec4(max(max(row_max.x, row_max.y), max(row_max.z, row_max.w)));
  barrier();
  vec4 s = vec4(0.0);
  for (int k = t; k < steps; k += LOCAL_SIZE_X) {
#if defined(STORAGE_buffer)
    s.x += exp(float(t_in[start + k * stride]) - row_max.x);
#else
    const vec4 x = vec4(imageLoad(t_in, POS(k)));
    for (int l = 0; l < 4; ++l)
      if (lanes_are_rows || 4 * k + l < len) s[l] += exp(x[l] - row_max[l]);
#endif
  }
  combine(s, false);
  vec4 row_sum = red[0];
  if (!lanes_are_rows) row_sum = vec4(row_sum.x + row_sum.y + row_sum.z + row_sum.w);
  for (int k = t; k < steps; k += LOCAL_SIZE_X) {
#if defined(STORAGE_buffer)
    t_out[start + k * stride] = T(SOFTMAX_OUT(float(t_in[start + k * stride]), row_max.x, row_sum.x));
#else
    const ivec3 pos = POS(k);
    vec4 y = SOFTMAX_OUT(vec4(imageLoad(t_in, pos)), row_max, row_sum);
    if (!lanes_are_rows)
      for (int l = 0; l < 4; ++l)
        if (4 * k + l >= len) y[l] = 0.0;
    imageStore(t_out, pos, VEC4_T(y));
#endif
  }
}
