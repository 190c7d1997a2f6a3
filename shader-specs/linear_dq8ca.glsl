#version 450
// out[m, n] = sum_k q(x[m, k]) * W[n][k] (+ bias[n]) with q(x) = (clamp(round(x / s_m) + z_m,
// -128, 127) - z_m) * s_m, W the int4 grouped weights (vkc_q4.glslh) times their scales.
#include "vkc_common.glslh"
#if defined(SPLIT_k)
#define VKC_SPLIT_K
#elif defined(SPLIT_gemv)
#define VKC_GEMV
#endif

layout(local_size_x = LOCAL_SIZE_X, local_size_y = LOCAL_SIZE_Y, local_size_z = LOCAL_SIZE_Z) in;

#include "vkc_out_in.glslh"
#include "vkc_linear_q.glslh"
#if defined(STORAGE_buffer)
layout(set = 0, binding = 5, std430) restrict readonly buffer XsBuf { T t_xs[]; };
layout(set = 0, binding = 6, std430) restrict readonly buffer XzBuf { int t_xz[]; };
#else
layout(set = 0, binding = 5, IMAGE_FORMAT) uniform restrict readonly IMAGE_T t_xs;
layout(set = 0, binding = 6, rgba32i) uniform restrict readonly iimage3D t_xz;
#endif

#if !defined(VKC_GEMV)
float weight_at(int n, int k) { return q4_weight(n, k); }
#endif

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

#include "vkc_linear_main.glslh"

