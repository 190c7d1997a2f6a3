#version 450
// Static-int8 relu (see q8ta_relu.yaml).
#include "vkc_common.glslh"

layout(local_size_x = LOCAL_SIZE_X, local_size_y = LOCAL_SIZE_Y, local_size_z = LOCAL_SIZE_Z) in;

layout(set = 0, binding = 0, std430) restrict writeonly buffer OutBuf { int t_out[]; };
layout(set = 0, binding = 1, std430) restrict readonly buffer InBuf { int t_in[]; };

layout(push_constant) uniform Params {
  int words;
  int in_zp;
  int out_zp;
  float in_scale;
  float out_scale;
} p;

#include "vkc_q8ta.glslh"

void main() {
  const int i = global_index();
  if (i >= p.words) return;
  const ivec4 x = q8_unpack(t_in[i]) - p.in_zp;
  ivec4 q;
  for (int l = 0; l < 4; ++l) q[l] = q8ta_requantize(float(x[l]) * p.in_scale, 1, p.out_scale, p.out_zp);
  t_out[i] = q8_pack(q);
}
