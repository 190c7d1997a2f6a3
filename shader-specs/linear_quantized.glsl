#version 450
// out = in x dequant(W)^T (+ bias), over the last dim: in [..., K], out [..., N].
//   q8: W[n][k] = int8 byte n * K + k, times scales[n].
//   q4: W[n][k] = (nibble k of row n) - 8, row n holding pad8(K) / 2 bytes (even k low nibble),
//       times scales[(k / group) * scales_stride + n].
// Bytes come from a uint array (little-endian words); scales and bias are f32 buffers.
#include "vkc_common.glslh"

layout(local_size_x = LOCAL_SIZE_X, local_size_y = LOCAL_SIZE_Y, local_size_z = LOCAL_SIZE_Z) in;

#include "vkc_out_in.glslh"
layout(set = 0, binding = 2, std430) restrict readonly buffer WeightBuf { uint t_weight[]; };
layout(set = 0, binding = 3, std430) restrict readonly buffer ScalesBuf { float t_scales[]; };
layout(set = 0, binding = 4, std430) restrict readonly buffer BiasBuf { float t_bias[]; };

layout(push_constant) uniform Params {
  ivec4 out_sizes;  // WHCN: x = N
  int k;
  int group;
  int scales_stride;
  int has_bias;
} p;

#include "vkc_q4.glslh"

float weight_at(int n, int k) {
#if defined(WEIGHTS_q8)
  const int q = int(weight_byte(n * p.k + k) << 24) >> 24;  // sign-extend
  return float(q) * t_scales[n];
#else
  return float(q4_at(n, k, p.k)) * t_scales[(k / p.group) * p.scales_stride + n];
#endif
}

float finish(float acc, int n) { return acc + (p.has_bias != 0 ? t_bias[n] : 0.0); }

void main() {
  const int idx = global_index();
  const int n_out = p.out_sizes.x;
#if defined(STORAGE_buffer)
  if (idx >= numel(p.out_sizes)) return;
  const int n = idx % n_out, row = idx / n_out;
  float acc = 0.0;
  for (int k = 0; k < p.k; ++k) acc += float(t_in[row * p.k + k]) * weight_at(n, k);
  t_out[idx] = T(finish(acc, n));
#else
  const ivec3 extents = texture_extents(p.out_sizes, 0);
  if (idx >= extents.x * extents.y * extents.z) return;
  const ivec3 pos = index_to_pos(idx, extents);
  const int n0 = pos.x * 4;
  vec4 acc = vec4(0.0);
  for (int k4 = 0; k4 < div_up4(p.k); ++k4) {
    const vec4 x = vec4(imageLoad(t_in, ivec3(k4, pos.y, pos.z)));
    for (int j = 0; j < 4 && 4 * k4 + j < p.k; ++j)
      for (int lane = 0; lane < 4 && n0 + lane < n_out; ++lane) acc[lane] += x[j] * weight_at(n0 + lane, 4 * k4 + j);
  }
  vec4 r = vec4(0.0);
  for (int lane = 0; lane < 4 && n0 + lane < n_out; ++lane) r[lane] = finish(acc[lane], n0 + lane);
  imageStore(t_out, pos, VEC4_T(r));
#endif
}
