#version 450
// 2-D convolution (and transposed convolution) with groups, stride, padding, dilation,
// bias and an output clamp, on channels-packed textures. Weights and bias are the raw
// constants in storage buffers:
//   convolution:  weight [C_out, C_in / groups, K_h, K_w]
//   transposed:   weight [C_in, C_out / groups, K_h, K_w]
// One invocation per output texel (4 output channels at one (x, y, n)).
#include "vkc_common.glslh"

layout(local_size_x = LOCAL_SIZE_X, local_size_y = LOCAL_SIZE_Y, local_size_z = LOCAL_SIZE_Z) in;

#include "vkc_out_in.glslh"
layout(set = 0, binding = 2, std430) restrict readonly buffer WeightBuf { T t_weight[]; };
layout(set = 0, binding = 3, std430) restrict readonly buffer BiasBuf { T t_bias[]; };

#include "vkc_conv_params.glslh"

float input_at(int x, int y, int c, int n) {
  const int c4 = div_up4(p.in_sizes.z);
  return vec4(imageLoad(t_in, ivec3(x, y, n * c4 + c / 4)))[c & 3];
}

float output_channel(int ox, int oy, int oc, int n) {
  const int kw = p.kernel_stride.x, kh = p.kernel_stride.y;
  const int cout_g = p.out_sizes.z / p.groups, cin_g = p.in_sizes.z / p.groups;
  const int g = oc / cout_g;
  float acc = p.has_bias != 0 ? float(t_bias[oc]) : 0.0;
  for (int icl = 0; icl < cin_g; ++icl) {
    const int ic = g * cin_g + icl;
    for (int ky = 0; ky < kh; ++ky) {
#if TRANSPOSED
      const int ty = oy + p.pad_dilation.y - ky * p.pad_dilation.w;
      if (ty < 0 || ty % p.kernel_stride.w != 0) continue;
      const int iy = ty / p.kernel_stride.w;
#else
      const int iy = oy * p.kernel_stride.w - p.pad_dilation.y + ky * p.pad_dilation.w;
#endif
      if (iy < 0 || iy >= p.in_sizes.y) continue;
      for (int kx = 0; kx < kw; ++kx) {
#if TRANSPOSED
        const int tx = ox + p.pad_dilation.x - kx * p.pad_dilation.z;
        if (tx < 0 || tx % p.kernel_stride.z != 0) continue;
        const int ix = tx / p.kernel_stride.z;
        const int widx = ((ic * cout_g + (oc - g * cout_g)) * kh + ky) * kw + kx;
#else
        const int ix = ox * p.kernel_stride.z - p.pad_dilation.x + kx * p.pad_dilation.z;
        const int widx = ((oc * cin_g + icl) * kh + ky) * kw + kx;
#endif
        if (ix < 0 || ix >= p.in_sizes.x) continue;
        acc += input_at(ix, iy, ic, n) * float(t_weight[widx]);
      }
    }
  }
  return clamp(acc, p.out_min, p.out_max);
}

void main() {
  const int idx = global_index();
  const ivec3 extents = texture_extents(p.out_sizes, 2);
  if (idx >= extents.x * extents.y * extents.z) return;
  const ivec3 pos = index_to_pos(idx, extents);
  const ivec4 base = texel_to_whcn(pos, p.out_sizes, 2);
  vec4 r = vec4(0.0);
  for (int lane = 0; lane < 4 && base.z + lane < p.out_sizes.z; ++lane)
    r[lane] = output_channel(base.x, base.y, base.z + lane, base.w);
  imageStore(t_out, pos, VEC4_T(r));
}
