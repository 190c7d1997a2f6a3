#version 450
#if defined(GEMV_SUBGROUP) && GEMV_SUBGROUP
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#endif
#if defined(DOT_khr)
#extension GL_EXT_spirv_intrinsics : require
#endif
// out[m, n] = sum_k q(x[m, k]) * W[n][k] (+ bias[n]) with q(x) = (clamp(round(x / s_m) + z_m,
// -128, 127) - z_m) * s_m, W the int4 grouped weights (vkc_q4.glslh) times their scales.
#include "vkc_common.glslh"
#if defined(SPLIT_k)
#define VKC_SPLIT_K
#elif defined(SPLIT_gemv)
#define VKC_GEMV
#define GEMV_OTHER_BINDING 7
#define Q_EXTRA_BINDING 7
#if defined(DOT_khr)
// The _dot variants: the workgroup stages the row's int8 values once and multiplies them by the
// int4 weights with integer dot products (vkc_linear_gemv.glslh's GEMV_DOT8).
#define GEMV_STAGE_X 1
#define GEMV_DOT8 1
// Teams of 64 (the _t4 copies: 4 teams sharing the row's parameters and staging).
#define GEMV_TEAM 64
// The _ep variants (a decoder's output and down projections, the down projection's K several
// spans): the first 3 spans' weights loaded at once (vkc_linear_gemv.glslh's GEMV_EARLY_SPANS).
#if EPILOGUE && !DUAL
#define GEMV_EARLY_SPANS 3
#endif
#else
// Each invocation reads its own chunks' inputs (vkc_linear_gemv.glslh): the 8da4w decode step on
// the H100 was 0.91-0.93x as fast with the workgroup's shared copy of the dequantized inputs.
#define GEMV_STAGE_X 0
#endif
#endif

layout(local_size_x = LOCAL_SIZE_X, local_size_y = LOCAL_SIZE_Y, local_size_z = LOCAL_SIZE_Z) in;

#include "vkc_out_in.glslh"
#include "vkc_linear_q.glslh"
#if defined(STORAGE_buffer)
layout(set = 0, binding = 5, std430) restrict VKC_IN_COHERENT readonly buffer XsBuf { T t_xs[]; };
layout(set = 0, binding = 6, std430) restrict VKC_IN_COHERENT readonly buffer XzBuf { int t_xz[]; };
#else
layout(set = 0, binding = 5, IMAGE_FORMAT) uniform restrict VKC_IN_COHERENT readonly IMAGE_T t_xs;
layout(set = 0, binding = 6, rgba32i) uniform restrict VKC_IN_COHERENT readonly iimage3D t_xz;
#endif

#if !defined(VKC_GEMV)
float weight_at(int n, int k) { return q4_weight(n, k); }
#endif

#if ROWQ
#if NORM
// The RMSNorm before this linear, inside it (the _norm variants; `in` is the norm's input): the
// row's min and max of x * gamma and its sum of x^2 in one pass, the norm's factor from the sum,
// and x read as round((x * gamma) * rstd) (vkc_linear_gemv.glslh's GEMV_NORM_IN_PARAMS): the
// rounding is monotonic, so the scaled min and max are the normalized row's.
#define GEMV_NORM_IN_PARAMS
layout(set = 0, binding = GEMV_GAMMA_BINDING, std430) restrict readonly buffer GammaBuf { T t_gamma[]; };
#include "vkc_gamma4.glslh"
float gemv_rstd = 1.0;
float gemv_norm_value(float xg) {
#if defined(DTYPE_f16)
  return vkc_round_f16(vec4(xg * gemv_rstd)).x;
#else
  return xg * gemv_rstd;
#endif
}
#endif
// Row m's (scale, zero point) computed here, as choose_qparams.glsl computes them (asymmetric
// int8 over the row's min and max, each with 0; the scale rounded as its f16 tensor stores it):
// the workgroup reduces the row in shared memory (with GEMV_SUBGROUP, across each subgroup first:
// one barrier, not log2(LOCAL_SIZE_X)). Called by every invocation of the workgroup.
// The row is read a word of 8 inputs an invocation (K a multiple of 32 here); the words the _dot
// variants keep for their staging (vkc_gemv_row.glslh: x * gamma with NORM, their squares summed
// as read) are taken from registers.
#include "vkc_gemv_row.glslh"
shared vec3 rowq_red[LOCAL_SIZE_X];
vec2 row_params(int m) {
  const int t = int(gl_LocalInvocationID.x);
  vec3 mm = vec3(0.0);  // min, max, (NORM) sum of squares
  int e8 = t;
#if GEMV_ROW_KEEP
  for (int s = 0; s < GEMV_ROW_KEEP; ++s)
    if (s * LOCAL_SIZE_X + t < p.k / 8)
      for (int h = 0; h < 2; ++h) {
        const vec4 v = gemv_kept[s][h];
        mm.xy = vec2(min(mm.x, min(min(v.x, v.y), min(v.z, v.w))), max(mm.y, max(max(v.x, v.y), max(v.z, v.w))));
      }
#if NORM
  mm.z = gemv_kept_squares;
#endif
  e8 += GEMV_ROW_KEEP * LOCAL_SIZE_X;
#endif
  for (; e8 < p.k / 8; e8 += LOCAL_SIZE_X) {
    vec4 w[2];
#if defined(STORAGE_buffer)
    for (int l = 0; l < 4; ++l) {
      w[0][l] = float(t_in[m * p.k + 8 * e8 + l]);
      w[1][l] = float(t_in[m * p.k + 8 * e8 + 4 + l]);
    }
#else
    w[0] = vec4(imageLoad(t_in, ivec3(2 * e8, m % p.out_sizes.y, m / p.out_sizes.y)));
    w[1] = vec4(imageLoad(t_in, ivec3(2 * e8 + 1, m % p.out_sizes.y, m / p.out_sizes.y)));
#endif
    for (int h = 0; h < 2; ++h) {
      vec4 v = w[h];
#if NORM
      mm.z += dot(v, v);
      v *= gamma4(8 * e8 + 4 * h);
#endif
      mm.xy = vec2(min(mm.x, min(min(v.x, v.y), min(v.z, v.w))), max(mm.y, max(max(v.x, v.y), max(v.z, v.w))));
    }
  }
#if GEMV_SUBGROUP
  // min <= 0 <= max: both as the largest of two non-negative floats (-min, max), whose bits order
  // as unsigned integers: an integer subgroup maximum (one instruction on NVIDIA GPUs since
  // Ampere; a float's takes a shuffle a step).
  const uvec2 range = subgroupMax(floatBitsToUint(vec2(-mm.x, mm.y)) & 0x7FFFFFFFu);
  mm = vec3(-uintBitsToFloat(range.x), uintBitsToFloat(range.y), subgroupAdd(mm.z));
  if (subgroupElect()) rowq_red[gl_SubgroupID] = mm;
  barrier();
  vec3 all = rowq_red[0];
  for (uint s = 1; s < gl_NumSubgroups; ++s)
    all = vec3(min(all.x, rowq_red[s].x), max(all.y, rowq_red[s].y), all.z + rowq_red[s].z);
#else
  rowq_red[t] = mm;
  barrier();
  for (int s = LOCAL_SIZE_X / 2; s > 0; s >>= 1) {
    if (t < s)
      rowq_red[t] = vec3(min(rowq_red[t].x, rowq_red[t + s].x), max(rowq_red[t].y, rowq_red[t + s].y),
                         rowq_red[t].z + rowq_red[t + s].z);
    barrier();
  }
  const vec3 all = rowq_red[0];
#endif
#if NORM
  gemv_rstd = inversesqrt(all.z / float(p.k) + p.norm_eps);
  const vec2 r = vec2(gemv_norm_value(all.x), gemv_norm_value(all.y));
#else
  const vec2 r = all.xy;
#endif
  // The scale and zero point tensors stay bound (one binding list for the spec's variants) but
  // are not read: a branch never taken (eps > 0) keeps them in the module.
  if (p.eps < 0.0) {
#if defined(STORAGE_buffer)
    return vec2(float(t_xs[m]), float(t_xz[m]));
#else
    return vec2(imageLoad(t_xs, ivec3(0)).x, float(imageLoad(t_xz, ivec3(0)).x));
#endif
  }
  const float scale = max((r.y - r.x) / 255.0, p.eps);
  const float zero = clamp(-128.0 - roundEven(r.x / scale), -128.0, 127.0);
#if defined(DTYPE_f16)
  return vec2(vkc_round_f16(vec4(scale)).x, zero);
#else
  return vec2(scale, zero);
#endif
}
#else
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
#endif  // ROWQ

// The row's int8 value of x, and its quantization round trip. input_q8, run on every input of
// the _dot variants, without quarter-rate operations: x / s as x times 1 / s (one reciprocal a
// row; a float division's error), rounded to an integer, ties to even, by one add of 1.5 * 2^23
// (exact for |x / s| < 2^22: clamped first; a row's own parameters keep it within 256), read off
// the bits, the zero point added and clamped as integers.
int input_q8(float x, vec2 q) {
  const float a = clamp(x * (1.0 / q.x), -4096.0, 4096.0);
  return clamp(floatBitsToInt(a + 12582912.0) - 0x4B400000 + int(q.y), -128, 127);
}
float input_value(float x, vec2 q) { return (clamp(roundEven(x / q.x) + q.y, -128.0, 127.0) - q.y) * q.x; }

#if defined(GEMV_DOT8) && GEMV_DOT8
#include "vkc_q8ta.glslh"
// sum_k (q_k - z) * (n_k - 8) over one chunk of 32, as integers: n the weights' nibbles (their
// even elements in one word's bytes, the odd ones in another, with two masks), q the int8 inputs
// packed the same way (xq), qsum their sum, z the row's zero point:
//   sum q n - z sum n - 8 qsum + 8 z 32   (sum n from the nibbles' byte sums, at most 120 a byte).
int chunk_dot_q8(uvec4 w, ivec2 xq[4], int qsum, vec2 params) {
  int d = 0, nibbles = 0;
  for (int j = 0; j < 4; ++j) {
    const int lo = int(w[j] & 0x0F0F0F0Fu), hi = int((w[j] >> 4) & 0x0F0F0F0Fu);
    d += q8_dot(lo, xq[j].x) + q8_dot(hi, xq[j].y);
    nibbles += lo + hi;
  }
  const int z = int(params.y);
  return d - z * q8_dot(nibbles, 0x01010101) - 8 * qsum + 256 * z;
}
#endif

#include "vkc_linear_main.glslh"

