#version 450
// out[m, n] = sum_k dq(x[m, k]) * W[n][k] (+ bias[n]) with dq(x) = (clamp(round(x / s_m) + z_m,
// -128, 127) - z_m) * s_m, W the int4 grouped weights (vkc_q4.glslh) times their scales.
#include "vkc_common.glslh"

layout(local_size_x = LOCAL_SIZE_X, local_size_y = LOCAL_SIZE_Y, local_size_z = LOCAL_SIZE_Z) in;

#include "vkc_out_in.glslh"
layout(set = 0, binding = 2, std430) restrict readonly buffer WeightBuf { uint t_weight[]; };
layout(set = 0, binding = 3, std430) restrict readonly buffer ScalesBuf { float t_scales[]; };
layout(set = 0, binding = 4, std430) restrict readonly buffer BiasBuf { float t_bias[]; };
#if defined(STORAGE_buffer)
layout(set = 0, binding = 5, std430) restrict readonly buffer XsBuf { T t_xs[]; };
layout(set = 0, binding = 6, std430) restrict readonly buffer XzBuf { int t_xz[]; };
#else
layout(set = 0, binding = 5, IMAGE_FORMAT) uniform restrict readonly IMAGE_T t_xs;
layout(set = 0, binding = 6, rgba32i) uniform restrict readonly iimage3D t_xz;
#endif

layout(push_constant) uniform Params {
  ivec4 out_sizes;  // WHCN: x = N
  int k;
  int group;
  int scales_stride;
  int has_bias;
} p;

#include "vkc_q4.glslh"

float weight_at(int n, int k) { return float(q4_at(n, k, p.k)) * t_scales[(k / p.group) * p.scales_stride + n]; }

// Row m's (scale, zero point): element m of the row-shaped tensors (WHCN sizes rows).
vec2 row_qparams(int m) {
  const ivec4 rows = ivec4(p.out_sizes.yzw, 1);
#if defined(STORAGE_buffer)
  return vec2(float(t_xs[m]), float(t_xz[m]));
#else
  const ivec4 t = whcn_to_texel(index_to_whcn(m, rows), rows, 0);
  return vec2(imageLoad(t_xs, t.xyz)[t.w], float(imageLoad(t_xz, t.xyz)[t.w]));
#endif
}

float dq(float x, vec2 q) { return (clamp(roundEven(x / q.x) + q.y, -128.0, 127.0) - q.y) * q.x; }

float finish(float acc, int n) { return acc + (p.has_bias != 0 ? t_bias[n] : 0.0); }

void main() {
  const int idx = global_index();
  const int n_out = p.out_sizes.x;
#if defined(STORAGE_buffer)
  if (idx >= numel(p.out_sizes)) return;
  const int n = idx % n_out, row = idx / n_out;
  const vec2 q = row_qparams(row);
  float acc = 0.0;
  for (int k = 0; k < p.k; ++k) acc += dq(float(t_in[row * p.k + k]), q) * weight_at(n, k);
  t_out[idx] = T(finish(acc, n));
#else
  const ivec3 extents = texture_extents(p.out_sizes, 0);
  if (idx >= extents.x * extents.y * extents.z) return;
  const ivec3 pos = index_to_pos(idx, extents);
  const int n0 = pos.x * 4;
  // Row index over (h, c, n) of this texel: y = h, z = n * C + c.
  const vec2 q = row_qparams(pos.z * p.out_sizes.y + pos.y);
  vec4 acc = vec4(0.0);
  for (int k4 = 0; k4 < div_up4(p.k); ++k4) {
    const vec4 x = vec4(imageLoad(t_in, ivec3(k4, pos.y, pos.z)));
    for (int j = 0; j < 4 && 4 * k4 + j < p.k; ++j) {
      const float xq = dq(x[j], q);
      for (int lane = 0; lane < 4 && n0 + lane < n_out; ++lane) acc[lane] += xq * weight_at(n0 + lane, 4 * k4 + j);
    }
  }
  vec4 r = vec4(0.0);
  for (int lane = 0; lane < 4 && n0 + lane < n_out; ++lane) r[lane] = finish(acc[lane], n0 + lane);
  imageStore(t_out, pos, VEC4_T(r));
#endif
}
