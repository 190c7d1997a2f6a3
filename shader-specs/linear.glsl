#version 450
// out = beta * bias + alpha * (in x W^T), over the last dim: in [..., K], out [..., N].
// W is a constant in a storage buffer: [N, K] (linear: weight_kn = 0) or [K, N]
// (addmm: weight_kn = 1). bias [N] is read when has_bias != 0.
// Buffer variants: contiguous tensors, one invocation per output element.
// Texture variants: width-packed textures, one invocation per output texel (4 outputs n).
#include "vkc_common.glslh"

layout(local_size_x = LOCAL_SIZE_X, local_size_y = LOCAL_SIZE_Y, local_size_z = LOCAL_SIZE_Z) in;

#include "vkc_out_in.glslh"
layout(set = 0, binding = 2, std430) restrict readonly buffer WeightBuf { T t_weight[]; };
layout(set = 0, binding = 3, std430) restrict readonly buffer BiasBuf { T t_bias[]; };

layout(push_constant) uniform Params {
  ivec4 out_sizes;  // WHCN: x = N
  int k;
  int weight_kn;
  int has_bias;
  float alpha;
  float beta;
} p;

float weight_at(int n, int k) {
  return float(t_weight[p.weight_kn != 0 ? k * p.out_sizes.x + n : n * p.k + k]);
}

float finish(float acc, int n) {
  return p.alpha * acc + (p.has_bias != 0 ? p.beta * float(t_bias[n]) : 0.0);
}

vec2 row_params(int row) { return vec2(0.0); }
float input_value(float x, vec2 params) { return x; }

#include "vkc_linear_main.glslh"
