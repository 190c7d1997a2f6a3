#version 450
// Static-int8 add (see q8ta_add.yaml).
#include "vkc_common.glslh"

layout(local_size_x = LOCAL_SIZE_X, local_size_y = LOCAL_SIZE_Y, local_size_z = LOCAL_SIZE_Z) in;

layout(set = 0, binding = 0, std430) restrict writeonly buffer OutBuf { int t_out[]; };
layout(set = 0, binding = 1, std430) restrict readonly buffer ABuf { int t_a[]; };
layout(set = 0, binding = 2, std430) restrict readonly buffer BBuf { int t_b[]; };

layout(push_constant) uniform Params {
  int words;
  int a_zp;
  int b_zp;
  int out_zp;
  float a_scale;
  float b_scale;
  float out_scale;
} p;

#include "vkc_q8ta.glslh"

void main() {
  const int i = global_index();
  if (i >= p.words) return;
  const ivec4 a = q8_unpack(t_a[i]) - p.a_zp, b = q8_unpack(t_b[i]) - p.b_zp;
  ivec4 q;
  for (int l = 0; l < 4; ++l)
    q[l] = q8ta_requantize(float(a[l]) * p.a_scale + float(b[l]) * p.b_scale, 0, p.out_scale, p.out_zp);
  t_out[i] = q8_pack(q);
}
