#version 450
// out[m, n] = sum_k q(x[m, k]) * W[n][k] (+ bias[n]) with q(x) = (clamp(round(x / s_m) + z_m,
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
vec2 row_params(int m) {
  const ivec4 rows = ivec4(p.out_sizes.yzw, 1);
#if defined(STORAGE_buffer)
  return vec2(float(t_xs[m]), float(t_xz[m]));
#else
  const ivec4 t = whcn_to_texel(index_to_whcn(m, rows), rows, 0);
  return vec2(imageLoad(t_xs, t.xyz)[t.w], float(imageLoad(t_xz, t.xyz)[t.w]));
#endif
}

// The row's int8 quantization round trip.
float input_value(float x, vec2 q) { return (clamp(roundEven(x / q.x) + q.y, -128.0, 127.0) - q.y) * q.x; }

float finish(float acc, int n) { return acc + (p.has_bias != 0 ? t_bias[n] : 0.0); }

#include "vkc_linear_main.glslh"

