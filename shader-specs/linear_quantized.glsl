#version 450
#if defined(DOT_khr)
#extension GL_EXT_spirv_intrinsics : require
#endif
// out = in x dequant(W)^T (+ bias), over the last dim: in [..., K], out [..., N].
//   q8: W[n][k] = int8 byte n * K + k, times scales[n].
//   q4: W[n][k] = (nibble k of row n) - 8, row n holding pad8(K) / 2 bytes (even k low nibble),
//       times scales[(k / group) * scales_stride + n].
// Bytes come from a uint array (little-endian words); scales and bias are f32 buffers.
#include "vkc_common.glslh"
#if defined(SPLIT_k)
#define VKC_SPLIT_K
#elif defined(SPLIT_gemv)
#define VKC_GEMV
#if defined(DOT_khr)
// The _dot variants (q4): the workgroup stages its row's inputs as 16-bit integers, a scale a chunk,
// and multiplies them by the int4 weights with integer dot products (vkc_linear_gemv.glslh's GEMV_DOT16).
#define GEMV_DOT16 1
// Teams of 64 (the _t4 copies: 4 teams sharing one staged row).
#define GEMV_TEAM 64
// The _ep variants (a decoder's output and down projections, the down projection's K several
// spans): the first 3 spans' weights loaded at once (vkc_linear_gemv.glslh's GEMV_EARLY_SPANS).
#if EPILOGUE && !DUAL
#define GEMV_EARLY_SPANS 3
#endif
#endif
#endif

layout(local_size_x = LOCAL_SIZE_X, local_size_y = LOCAL_SIZE_Y, local_size_z = LOCAL_SIZE_Z) in;

#include "vkc_out_in.glslh"
#include "vkc_linear_q.glslh"

#if !defined(VKC_GEMV)
float weight_at(int n, int k) {
#if defined(WEIGHTS_q8)
  const int q = int(weight_byte(n * p.k + k) << 24) >> 24;  // sign-extend
  return float(q) * t_scales[n];
#else
  return q4_weight(n, k);
#endif
}
#endif

vec2 row_params(int row) { return vec2(0.0); }
float input_value(float x, vec2 params) { return x; }

#include "vkc_linear_main.glslh"
