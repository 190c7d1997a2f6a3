#version 450
// Static-int8 convolution (see q8ta_conv2d.yaml).
#include "vkc_common.glslh"

layout(local_size_x = LOCAL_SIZE_X, local_size_y = LOCAL_SIZE_Y, local_size_z = LOCAL_SIZE_Z) in;

layout(set = 0, binding = 0, std430) restrict writeonly buffer OutBuf { int t_out[]; };
layout(set = 0, binding = 1, std430) restrict readonly buffer InBuf { int t_in[]; };
layout(set = 0, binding = 2, std430) restrict readonly buffer WeightBuf { int t_weight[]; };
layout(set = 0, binding = 3, std430) restrict readonly buffer ScalesBuf { float t_scales[]; };
layout(set = 0, binding = 4, std430) restrict readonly buffer BiasBuf { float t_bias[]; };

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
} p;

#include "vkc_q8ta.glslh"

void main() {
  const int i = global_index();
  if (i >= numel(p.out_sizes)) return;
  const ivec4 o = index_to_whcn(i, p.out_sizes);  // (ow, oh, oc, 0)
  const int oc = o.z;
  const int cg = p.in_sizes.z / p.groups;
  const int ic0 = (oc / (p.out_sizes.z / p.groups)) * cg;
  int acc = 0;
  for (int kh = 0; kh < p.kernel.y; ++kh) {
    const int ih = o.y * p.stride.y - p.padding.y + kh * p.dilation.y;
    if (ih < 0 || ih >= p.in_sizes.y) continue;
    for (int kw = 0; kw < p.kernel.x; ++kw) {
      const int iw = o.x * p.stride.x - p.padding.x + kw * p.dilation.x;
      if (iw < 0 || iw >= p.in_sizes.x) continue;
      const int tap = kh * p.kernel.x + kw;
      if (p.depthwise != 0) {
        acc += (t_in[(oc * p.in_sizes.y + ih) * p.in_sizes.x + iw] - p.in_zp) * t_weight[tap * p.w_stride + oc];
      } else {
        const int row = oc * p.w_stride + tap * cg;
        for (int c = 0; c < cg; ++c)
          acc += (t_in[((ic0 + c) * p.in_sizes.y + ih) * p.in_sizes.x + iw] - p.in_zp) * t_weight[row + c];
      }
    }
  }
  t_out[i] = q8ta_requantize(float(acc) * p.in_scale * t_scales[oc] + (p.has_bias != 0 ? t_bias[oc] : 0.0), p.relu,
                             p.out_scale, p.out_zp);
}
