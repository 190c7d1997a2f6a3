#version 450
// Static-int8 linear (see q8ta_linear.yaml).
#include "vkc_common.glslh"

layout(local_size_x = LOCAL_SIZE_X, local_size_y = LOCAL_SIZE_Y, local_size_z = LOCAL_SIZE_Z) in;

layout(set = 0, binding = 0, std430) restrict writeonly buffer OutBuf { int t_out[]; };
layout(set = 0, binding = 1, std430) restrict readonly buffer InBuf { int t_in[]; };
layout(set = 0, binding = 2, std430) restrict readonly buffer WeightBuf { int t_weight[]; };
layout(set = 0, binding = 3, std430) restrict readonly buffer ScalesBuf { float t_scales[]; };
layout(set = 0, binding = 4, std430) restrict readonly buffer BiasBuf { float t_bias[]; };

layout(push_constant) uniform Params {
  ivec4 out_sizes;
  int k;
  int w_stride;
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
  const int n = i % p.out_sizes.x, row = i / p.out_sizes.x;
  int acc = 0;
  for (int j = 0; j < p.k; ++j) acc += (t_in[row * p.k + j] - p.in_zp) * t_weight[n * p.w_stride + j];
  t_out[i] = q8ta_requantize(float(acc) * p.in_scale * t_scales[n] + (p.has_bias != 0 ? t_bias[n] : 0.0), p.relu,
                             p.out_scale, p.out_zp);
}
