#version 450
#extension GL_EXT_control_flow_attributes : require
// Tiled 2-D convolution on channels-packed textures (conv2d_tiled.yaml): 4 output texels along
// W per invocation (transposed: one), weights prepacked as vec4s over 4 output channels.
#include "vkc_common.glslh"

layout(local_size_x = LOCAL_SIZE_X, local_size_y = LOCAL_SIZE_Y, local_size_z = LOCAL_SIZE_Z) in;

#include "vkc_out_in.glslh"
#include "vkc_packed_weights.glslh"
#include "vkc_conv_params.glslh"

// The input texel at (x, y, z); zero outside the width (rows are checked by the caller).
vec4 load_in(int x, int y, int z) {
  return x >= 0 && x < p.in_sizes.x ? vec4(imageLoad(t_in, ivec3(x, y, z))) : vec4(0.0);
}

// Output texels (x0 .. x0 + 3, y, z), clamped; those past the width are not stored.
// One tap of a general convolution at 4 output positions along W (the input texels at ix,
// ix + sw, ..., row iy, slice z; lanes not kept selected away): the 4 input lanes' weight vec4s
// from wi on, multiplied into the 4 accumulators.
void add_tap(int wi, int ix, int iy, int z, int sw, bvec4 keep, inout vec4 acc0, inout vec4 acc1, inout vec4 acc2,
             inout vec4 acc3) {
  const vec4 w0 = vec4(t_weight[wi]), w1 = vec4(t_weight[wi + 1]);
  const vec4 w2 = vec4(t_weight[wi + 2]), w3 = vec4(t_weight[wi + 3]);
  const vec4 i0 = mix(vec4(0.0), load_in(ix, iy, z), keep);
  const vec4 i1 = mix(vec4(0.0), load_in(ix + sw, iy, z), keep);
  const vec4 i2 = mix(vec4(0.0), load_in(ix + 2 * sw, iy, z), keep);
  const vec4 i3 = mix(vec4(0.0), load_in(ix + 3 * sw, iy, z), keep);
  acc0 += w0 * i0.x + w1 * i0.y + w2 * i0.z + w3 * i0.w;
  acc1 += w0 * i1.x + w1 * i1.y + w2 * i1.z + w3 * i1.w;
  acc2 += w0 * i2.x + w1 * i2.y + w2 * i2.z + w3 * i2.w;
  acc3 += w0 * i3.x + w1 * i3.y + w2 * i3.z + w3 * i3.w;
}

void store_row4(int x0, int y, int z, vec4 r0, vec4 r1, vec4 r2, vec4 r3) {
  const vec4 lo = vec4(p.out_min), hi = vec4(p.out_max);
  imageStore(t_out, ivec3(x0, y, z), VEC4_T(clamp(r0, lo, hi)));
  if (x0 + 1 < p.out_sizes.x) imageStore(t_out, ivec3(x0 + 1, y, z), VEC4_T(clamp(r1, lo, hi)));
  if (x0 + 2 < p.out_sizes.x) imageStore(t_out, ivec3(x0 + 2, y, z), VEC4_T(clamp(r2, lo, hi)));
  if (x0 + 3 < p.out_sizes.x) imageStore(t_out, ivec3(x0 + 3, y, z), VEC4_T(clamp(r3, lo, hi)));
}

#if POINTWISE
// Pointwise (1x1, stride 1, no padding, groups 1): 4 x positions x 2 output texels (8 output
// channels) per invocation; each input texel serves 8 channels, each weight vec4 4 positions.
void main() {
  const int idx = global_index();
  const int tiles_x = (p.out_sizes.x + 3) >> 2;
  const int oc4n = div_up4(p.out_sizes.z), oc8n = (oc4n + 1) >> 1;
  if (idx >= tiles_x * p.out_sizes.y * oc8n * p.out_sizes.w) return;
  const int ox0 = (idx % tiles_x) * 4;
  int rest = idx / tiles_x;
  const int oy = rest % p.out_sizes.y;
  rest /= p.out_sizes.y;
  const int oca = (rest % oc8n) * 2, n = rest / oc8n;
  const bool two = oca + 1 < oc4n;
  const int ic4n = div_up4(p.in_sizes.z);
  const int tail = p.in_sizes.z - (ic4n - 1) * 4;
  const bvec4 tail_keep = bvec4(tail > 0, tail > 1, tail > 2, tail > 3);
  // Positions past the width read the last column (their results are not stored).
  const int xl = p.in_sizes.x - 1;
  const int x1 = min(ox0 + 1, xl), x2 = min(ox0 + 2, xl), x3 = min(ox0 + 3, xl);
  const vec4 bias_a = p.has_bias != 0 ? bias4(oca * 4, p.out_sizes.z) : vec4(0.0);
  const vec4 bias_b = p.has_bias != 0 && two ? bias4(oca * 4 + 4, p.out_sizes.z) : vec4(0.0);
  vec4 a0 = bias_a, a1 = bias_a, a2 = bias_a, a3 = bias_a;
  vec4 b0 = bias_b, b1 = bias_b, b2 = bias_b, b3 = bias_b;
  int wa = oca * ic4n * 4, wb = (two ? oca + 1 : oca) * ic4n * 4;
  for (int ic4 = 0; ic4 < ic4n; ++ic4, wa += 4, wb += 4) {
    const int z = n * ic4n + ic4;
    const bvec4 keep = ic4 == ic4n - 1 ? tail_keep : bvec4(true);
    const vec4 i0 = mix(vec4(0.0), vec4(imageLoad(t_in, ivec3(ox0, oy, z))), keep);
    const vec4 i1 = mix(vec4(0.0), vec4(imageLoad(t_in, ivec3(x1, oy, z))), keep);
    const vec4 i2 = mix(vec4(0.0), vec4(imageLoad(t_in, ivec3(x2, oy, z))), keep);
    const vec4 i3 = mix(vec4(0.0), vec4(imageLoad(t_in, ivec3(x3, oy, z))), keep);
    vec4 w0 = vec4(t_weight[wa]), w1 = vec4(t_weight[wa + 1]), w2 = vec4(t_weight[wa + 2]), w3 = vec4(t_weight[wa + 3]);
    a0 += w0 * i0.x + w1 * i0.y + w2 * i0.z + w3 * i0.w;
    a1 += w0 * i1.x + w1 * i1.y + w2 * i1.z + w3 * i1.w;
    a2 += w0 * i2.x + w1 * i2.y + w2 * i2.z + w3 * i2.w;
    a3 += w0 * i3.x + w1 * i3.y + w2 * i3.z + w3 * i3.w;
    w0 = vec4(t_weight[wb]), w1 = vec4(t_weight[wb + 1]), w2 = vec4(t_weight[wb + 2]), w3 = vec4(t_weight[wb + 3]);
    b0 += w0 * i0.x + w1 * i0.y + w2 * i0.z + w3 * i0.w;
    b1 += w0 * i1.x + w1 * i1.y + w2 * i1.z + w3 * i1.w;
    b2 += w0 * i2.x + w1 * i2.y + w2 * i2.z + w3 * i2.w;
    b3 += w0 * i3.x + w1 * i3.y + w2 * i3.z + w3 * i3.w;
  }
  const int za = n * oc4n + oca;
  store_row4(ox0, oy, za, a0, a1, a2, a3);
  if (two) store_row4(ox0, oy, za + 1, b0, b1, b2, b3);
}
#elif TRANSPOSED
// Transposed: one output texel per invocation; only the kernel taps that land on it are visited.
void main() {
  const int idx = global_index();
  const int oc4n = div_up4(p.out_sizes.z);
  if (idx >= p.out_sizes.x * p.out_sizes.y * oc4n * p.out_sizes.w) return;
  const int ox = idx % p.out_sizes.x;
  int rest = idx / p.out_sizes.x;
  const int oy = rest % p.out_sizes.y;
  rest /= p.out_sizes.y;
  const int oc4 = rest % oc4n;
  const int n = rest / oc4n;
  const int kw = p.kernel_stride.x, kh = p.kernel_stride.y, sw = p.kernel_stride.z, sh = p.kernel_stride.w;
  const int dw = p.pad_dilation.z, dh = p.pad_dilation.w;
  const int ic4n = div_up4(p.in_sizes.z);
  vec4 acc = p.has_bias != 0 ? bias4(oc4 * 4, p.out_sizes.z) : vec4(0.0);
  const int tail = p.in_sizes.z - (ic4n - 1) * 4;
  const bvec4 tail_keep = bvec4(tail > 0, tail > 1, tail > 2, tail > 3);
  for (int ky = 0; ky < kh; ++ky) {
    const int ty = oy + p.pad_dilation.y - ky * dh;
    if (ty < 0 || ty % sh != 0 || ty / sh >= p.in_sizes.y) continue;
    for (int kx = 0; kx < kw; ++kx) {
      const int tx = ox + p.pad_dilation.x - kx * dw;
      if (tx < 0 || tx % sw != 0 || tx / sw >= p.in_sizes.x) continue;
      const ivec2 at = ivec2(tx / sw, ty / sh);
      int widx = ((oc4 * ic4n * kh + ky) * kw + kx) * 4;
      for (int ic4 = 0; ic4 < ic4n; ++ic4, widx += kh * kw * 4) {
        const vec4 i0 = mix(vec4(0.0), vec4(imageLoad(t_in, ivec3(at, n * ic4n + ic4))),
                            ic4 == ic4n - 1 ? tail_keep : bvec4(true));
        acc += vec4(t_weight[widx]) * i0.x + vec4(t_weight[widx + 1]) * i0.y + vec4(t_weight[widx + 2]) * i0.z +
               vec4(t_weight[widx + 3]) * i0.w;
      }
    }
  }
  imageStore(t_out, ivec3(ox, oy, n * oc4n + oc4), VEC4_T(clamp(acc, vec4(p.out_min), vec4(p.out_max))));
}
#else
void main() {
  const int idx = global_index();
  const int tiles_x = (p.out_sizes.x + 3) >> 2;
  const int oc4n = div_up4(p.out_sizes.z);
  if (idx >= tiles_x * p.out_sizes.y * oc4n * p.out_sizes.w) return;
  const int ox0 = (idx % tiles_x) * 4;
  int rest = idx / tiles_x;
  const int oy = rest % p.out_sizes.y;
  rest /= p.out_sizes.y;
  const int oc4 = rest % oc4n;
  const int n = rest / oc4n;

  const int kw = p.kernel_stride.x, kh = p.kernel_stride.y, sw = p.kernel_stride.z, sh = p.kernel_stride.w;
  const int dw = p.pad_dilation.z, dh = p.pad_dilation.w;
  const int ix0 = ox0 * sw - p.pad_dilation.x;
  const int iy0 = oy * sh - p.pad_dilation.y;
  const int in_c4 = div_up4(p.in_sizes.z);

  const vec4 bias = p.has_bias != 0 ? bias4(oc4 * 4, p.out_sizes.z) : vec4(0.0);
  vec4 acc0 = bias, acc1 = bias, acc2 = bias, acc3 = bias;

#if DEPTHWISE
  const int z = n * in_c4 + oc4;
  int widx = oc4 * kh * kw;
  if (kw == 3 && sw == 1 && dw == 1) {
    // 3 wide, stride and dilation 1 along W: the 4 outputs' taps share 6 input texels a row
    // (6 loads instead of 12), each output's sum in the general loop's order.
    for (int ky = 0; ky < kh; ++ky, widx += 3) {
      const int iy = iy0 + ky * dh;
      if (iy < 0 || iy >= p.in_sizes.y) continue;
      vec4 a[6];
      [[unroll]] for (int j = 0; j < 6; ++j) a[j] = load_in(ix0 + j, iy, z);
      [[unroll]] for (int kx = 0; kx < 3; ++kx) {
        const vec4 w = vec4(t_weight[widx + kx]);
        acc0 += w * a[kx];
        acc1 += w * a[kx + 1];
        acc2 += w * a[kx + 2];
        acc3 += w * a[kx + 3];
      }
    }
  } else
  for (int ky = 0; ky < kh; ++ky) {
    const int iy = iy0 + ky * dh;
    if (iy < 0 || iy >= p.in_sizes.y) {
      widx += kw;
      continue;
    }
    for (int kx = 0; kx < kw; ++kx, ++widx) {
      const vec4 w = vec4(t_weight[widx]);
      const int ix = ix0 + kx * dw;
      acc0 += w * load_in(ix, iy, z);
      acc1 += w * load_in(ix + sw, iy, z);
      acc2 += w * load_in(ix + 2 * sw, iy, z);
      acc3 += w * load_in(ix + 3 * sw, iy, z);
    }
  }
#else
  const int cin_g = p.in_sizes.z / p.groups, cout_g = p.out_sizes.z / p.groups;
  const int ic4n = div_up4(cin_g);
  const int g = (oc4 * 4) / cout_g;
  const int z0 = n * in_c4 + (g * cin_g) / 4;
  // Lanes past the last input channel: their weights are zero, but the texel's padding lanes
  // may hold anything (shared memory), so they are selected away rather than multiplied.
  const int tail = cin_g - (ic4n - 1) * 4;
  const bvec4 tail_keep = bvec4(tail > 0, tail > 1, tail > 2, tail > 3);
  int widx = oc4 * ic4n * kh * kw * 4;
  // 3x3 windows: the 9 taps unrolled (the H200: cnn_fp32's stem, 3 input channels, 10.7 -> 9.5 us;
  // loads made unconditionally at clamped positions were no faster, 9.9). Same taps, same order
  // of sums: bit-identical on lavapipe.
  if (kh == 3 && kw == 3) {
    for (int ic4 = 0; ic4 < ic4n; ++ic4, widx += 36) {
      const int z = z0 + ic4;
      const bvec4 keep = ic4 == ic4n - 1 ? tail_keep : bvec4(true);
      [[unroll]] for (int ky = 0; ky < 3; ++ky) {
        const int iy = iy0 + ky * dh;
        if (iy < 0 || iy >= p.in_sizes.y) continue;
        [[unroll]] for (int kx = 0; kx < 3; ++kx)
          add_tap(widx + (ky * 3 + kx) * 4, ix0 + kx * dw, iy, z, sw, keep, acc0, acc1, acc2, acc3);
      }
    }
  } else
  for (int ic4 = 0; ic4 < ic4n; ++ic4) {
    const int z = z0 + ic4;
    const bvec4 keep = ic4 == ic4n - 1 ? tail_keep : bvec4(true);
    for (int ky = 0; ky < kh; ++ky) {
      const int iy = iy0 + ky * dh;
      if (iy < 0 || iy >= p.in_sizes.y) {
        widx += kw * 4;
        continue;
      }
      for (int kx = 0; kx < kw; ++kx, widx += 4) add_tap(widx, ix0 + kx * dw, iy, z, sw, keep, acc0, acc1, acc2, acc3);
    }
  }
#endif

  store_row4(ox0, oy, n * oc4n + oc4, acc0, acc1, acc2, acc3);
}
#endif  // TRANSPOSED
