#version 450
// Static-int8 convolution on packed int8 words (see q8ta_conv2d.yaml).
#if defined(DOT_khr)
#extension GL_EXT_spirv_intrinsics : require
#endif
#extension GL_EXT_control_flow_attributes : require
#include "vkc_common.glslh"

layout(local_size_x = LOCAL_SIZE_X, local_size_y = LOCAL_SIZE_Y, local_size_z = LOCAL_SIZE_Z) in;

#include "vkc_q8ta_weighted.glslh"

layout(push_constant) uniform Params {
  ivec4 out_sizes;
  ivec4 in_sizes;
  ivec2 kernel;
  ivec2 stride;
  ivec2 padding;
  ivec2 dilation;
  int groups;
  int w_stride;
  int depthwise;
  int relu;
  int has_bias;
  int in_zp;
  int out_zp;
  float in_scale;
  float out_scale;
  int position_major;
} p;

#include "vkc_q8ta.glslh"

#if defined(WPACK_oc4)
// Sums q8_dot(x word, weight word) for output channels o.z .. o.z + 3 over the (tap, 4-channel group)
// pairs r = first, first + step, ... of the general / pointwise convolution at o (weights prepacked:
// one 16-byte load gives the 4 channels' words).
ivec4 accumulate(ivec4 o, int first, int step) {
  const int in_c4 = q8_blocks(p.in_sizes.z);
  const int zp4 = q8_pack(ivec4(p.in_zp));
  const int cg = p.in_sizes.z / p.groups, cg4 = q8_blocks(cg);
  const int group_c4 = ((o.z / (p.out_sizes.z / p.groups)) * cg) >> 2;  // the group's first input word
  const int taps = p.kernel.x * p.kernel.y;
  ivec4 acc = ivec4(0);
  for (int r = first; r < taps * cg4; r += step) {
    const int t = r / cg4, ic4 = r - t * cg4, kh = t / p.kernel.x, kw = t - kh * p.kernel.x;
    const int ih = o.y * p.stride.y - p.padding.y + kh * p.dilation.y;
    const int iw = o.x * p.stride.x - p.padding.x + kw * p.dilation.x;
    const bool inside = ih >= 0 && ih < p.in_sizes.y && iw >= 0 && iw < p.in_sizes.x;
    const int x = inside ? t_in[(ih * p.in_sizes.x + iw) * in_c4 + group_c4 + ic4] : zp4;
    const ivec4 w = t_weight4[((o.z >> 2) * taps + t) * cg4 + ic4];
    acc += ivec4(q8_dot(x, w.x), q8_dot(x, w.y), q8_dot(x, w.z), q8_dot(x, w.w));
  }
  return acc;
}
#else
// Depthwise at the 4 positions x0 .. x0 + n - 1 of row oy, channels oc0 .. oc0 + 3: each tap's
// weight word is read and unpacked once for the 4 positions; taps outside the input add nothing
// (positions past n are computed and not stored).
// 3-wide kernels at stride S (1 or 2) along W, dilation 1: the 4 positions' taps of a row are the
// 3 + 3 S words from iw0, each read and unpacked once (6 or 9 loads instead of 12).
#define DW_ROW3(S)                                                                                      \
  {                                                                                                     \
    ivec4 xs[3 + 3 * S];                                                                                \
    [[unroll]] for (int j = 0; j < 3 + 3 * S; ++j) {                                                    \
      const int iw = iw0 + j;                                                                           \
      xs[j] = iw >= 0 && iw < p.in_sizes.x ? q8_unpack(t_in[row + iw * in_c4]) - p.in_zp : ivec4(0); \
    }                                                                                                   \
    [[unroll]] for (int kw = 0; kw < 3; ++kw) {                                                         \
      const ivec4 w = q8_unpack(t_weight[((kh * 3 + kw) * p.w_stride + oc0) >> 2]);                    \
      [[unroll]] for (int k = 0; k < 4; ++k) acc[k] += xs[k * S + kw] * w;                              \
    }                                                                                                   \
  }

void accumulate_depthwise(int x0, int oy, int oc0, int n, inout ivec4 acc[4]) {
  const int in_c4 = q8_blocks(p.in_sizes.z), c = oc0 >> 2;
  if (p.kernel.x == 3 && p.dilation.x == 1 && (p.stride.x == 1 || p.stride.x == 2)) {
    const int iw0 = x0 * p.stride.x - p.padding.x;
    for (int kh = 0; kh < p.kernel.y; ++kh) {
      const int ih = oy * p.stride.y - p.padding.y + kh * p.dilation.y;
      if (ih < 0 || ih >= p.in_sizes.y) continue;
      const int row = ih * p.in_sizes.x * in_c4 + c;
      if (p.stride.x == 1) DW_ROW3(1) else DW_ROW3(2)
    }
    return;
  }
  for (int kh = 0; kh < p.kernel.y; ++kh) {
    const int ih = oy * p.stride.y - p.padding.y + kh * p.dilation.y;
    if (ih < 0 || ih >= p.in_sizes.y) continue;
    for (int kw = 0; kw < p.kernel.x; ++kw) {
      const ivec4 w = q8_unpack(t_weight[((kh * p.kernel.x + kw) * p.w_stride + oc0) >> 2]);
      [[unroll]] for (int k = 0; k < 4; ++k) {  // constant indices keep acc in registers
        const int iw = (x0 + k) * p.stride.x - p.padding.x + kw * p.dilation.x;
        if (k < n && iw >= 0 && iw < p.in_sizes.x)
          acc[k] += (q8_unpack(t_in[(ih * p.in_sizes.x + iw) * in_c4 + c]) - p.in_zp) * w;
      }
    }
  }
}

#endif

// Output word i from its accumulators.
void store(int i, ivec4 o, ivec4 acc) {
  ivec4 q = ivec4(0);
  for (int j = 0; j < 4 && o.z + j < p.out_sizes.z; ++j) {
    const int oc = o.z + j;
    q[j] = q8ta_channel_output(p.depthwise != 0 ? acc[j] : acc[j] - p.in_zp * t_sums[oc], oc);
  }
  t_out[i] = q8_pack(q);
}

#if defined(SPLIT_k)
// A workgroup per output word: its invocations take every LOCAL_SIZE_X-th (tap, channel group) and
// shared memory adds them up (general and pointwise only).
shared ivec4 s_acc[LOCAL_SIZE_X];

void main() {
  const int i = global_index() / LOCAL_SIZE_X, t = int(gl_LocalInvocationID.x);
  const bool live = i < q8_words(p.out_sizes, 2);
  const ivec4 o = q8_word_origin(live ? i : 0, p.out_sizes, 2);
  s_acc[t] = live ? accumulate(o, t, LOCAL_SIZE_X) : ivec4(0);
  barrier();
  for (int half_size = LOCAL_SIZE_X / 2; half_size > 0; half_size /= 2) {
    if (t < half_size) s_acc[t] += s_acc[t + half_size];
    barrier();
  }
  if (live && t == 0) store(i, o, s_acc[0]);
}
#else
// An invocation per 4 output words along W (4 positions x 4 output channels; x 8 channels in the
// _w4c8 variants): each weight word serves the 4 positions (general, pointwise: the _w4 variants),
// each input word the 4 (8) channels.
#if defined(TILE_c8)
#define OCB 2  // channel blocks of 4 per invocation
#else
#define OCB 1
#endif
void main() {
  const int w4 = q8_blocks(p.out_sizes.x), c4 = (q8_blocks(p.out_sizes.z) + OCB - 1) / OCB;
  const int i = global_index();
  if (i >= c4 * w4 * p.out_sizes.y) return;
  // Neighbouring invocations take neighbouring channel blocks (one input word, consecutive weight
  // words: coalesced on a GPU), or with position_major (CPU devices, whose SIMD lanes are
  // invocations) neighbouring positions of one channel block (about 20% faster on lavapipe).
  const int oc0 = (p.position_major != 0 ? i / (w4 * p.out_sizes.y) : i % c4) * 4 * OCB;
  const int x0 = p.position_major != 0 ? (i % w4) * 4 : ((i / c4) % w4) * 4;
  const int oy = p.position_major != 0 ? (i / w4) % p.out_sizes.y : i / (c4 * w4);
#if !defined(WPACK_oc4)
  // Depthwise (general and pointwise convolutions take the _w4 variants, whose weights are prepacked).
  const int n = min(4, p.out_sizes.x - x0);
  ivec4 acc[4] = ivec4[4](ivec4(0), ivec4(0), ivec4(0), ivec4(0));
  accumulate_depthwise(x0, oy, oc0, n, acc);
  [[unroll]] for (int k = 0; k < 4; ++k) {
    if (k >= n) break;
    const ivec4 o = ivec4(x0 + k, oy, oc0, 0);
    store(q8_word(o, p.out_sizes, 2), o, acc[k]);
  }
#else
  const int in_c4 = q8_blocks(p.in_sizes.z);
  const int zp4 = q8_pack(ivec4(p.in_zp));
  const int cg = p.in_sizes.z / p.groups, cg4 = q8_blocks(cg);
  const int group_c4 = ((oc0 / (p.out_sizes.z / p.groups)) * cg) >> 2;
  const int n = min(4, p.out_sizes.x - x0);
  // acc[b * 4 + k]: channel block b (of OCB; weights past the output's last block re-read it), position k.
  ivec4 acc[OCB * 4];
  [[unroll]] for (int j = 0; j < OCB * 4; ++j) acc[j] = ivec4(0);
  const int last_block = q8_blocks(p.out_sizes.z) - 1, taps = p.kernel.x * p.kernel.y;
  for (int kh = 0; kh < p.kernel.y; ++kh) {
    const int ih = oy * p.stride.y - p.padding.y + kh * p.dilation.y;
    const bool row = ih >= 0 && ih < p.in_sizes.y;
    for (int kw = 0; kw < p.kernel.x; ++kw) {
      const int t = kh * p.kernel.x + kw;
      for (int ic4 = 0; ic4 < cg4; ++ic4) {
        // The 4 channels' words of (tap, 4 input channels) in one load per block.
        ivec4 w[OCB];
        [[unroll]] for (int b = 0; b < OCB; ++b)
          w[b] = t_weight4[(min((oc0 >> 2) + b, last_block) * taps + t) * cg4 + ic4];
        // Unrolled: constant indices keep acc in registers (a GPU spills an array indexed at run time).
        [[unroll]] for (int k = 0; k < 4; ++k) {
          if (k >= n) break;
          const int iw = (x0 + k) * p.stride.x - p.padding.x + kw * p.dilation.x;
          const int x = row && iw >= 0 && iw < p.in_sizes.x ? t_in[(ih * p.in_sizes.x + iw) * in_c4 + group_c4 + ic4] : zp4;
          [[unroll]] for (int b = 0; b < OCB; ++b)
            acc[b * 4 + k] += ivec4(q8_dot(x, w[b].x), q8_dot(x, w[b].y), q8_dot(x, w[b].z), q8_dot(x, w[b].w));
        }
      }
    }
  }
#if defined(TILE_c8)
  // CPU devices: each channel block's sums, scales and bias read once for its 4 positions, and the
  // 4 channels requantized as one vector (lavapipe: squeezenet1_1's 16 -> 64 pointwise 2.2 -> 1.0 ms,
  // bit-identical). GPUs keep the scalar form below, whose outputs matched ET-VK's exactly on the H200.
  [[unroll]] for (int b = 0; b < OCB; ++b) {
    const int oc = oc0 + 4 * b;
    if (oc >= p.out_sizes.z) break;
    const ivec4 ch = min(ivec4(oc) + ivec4(0, 1, 2, 3), ivec4(p.out_sizes.z - 1));
    const ivec4 sums = ivec4(t_sums[ch.x], t_sums[ch.y], t_sums[ch.z], t_sums[ch.w]);
    const vec4 scales = vec4(t_scales[ch.x], t_scales[ch.y], t_scales[ch.z], t_scales[ch.w]);
    const vec4 bias = p.has_bias != 0 ? vec4(t_bias[ch.x], t_bias[ch.y], t_bias[ch.z], t_bias[ch.w]) : vec4(0.0);
    [[unroll]] for (int k = 0; k < 4; ++k) {
      if (k >= n) break;
      t_out[q8_word(ivec4(x0 + k, oy, oc, 0), p.out_sizes, 2)] = q8ta_word_output(acc[b * 4 + k], sums, scales, bias);
    }
  }
#else
  [[unroll]] for (int b = 0; b < OCB; ++b)
    if (oc0 + 4 * b < p.out_sizes.z)
      [[unroll]] for (int k = 0; k < 4; ++k) {
        if (k >= n) break;
        const ivec4 o = ivec4(x0 + k, oy, oc0 + 4 * b, 0);
        store(q8_word(o, p.out_sizes, 2), o, acc[b * 4 + k]);
      }
#endif
#endif
}
#endif
