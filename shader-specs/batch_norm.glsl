#version 450
// Inference batch norm on channels-packed textures:
//   out = (in - mean[c]) / sqrt(var[c] + eps) * weight[c] + bias[c]
// weight, bias, mean and var are constants in storage buffers of C elements (the runtime
// binds ones / zeros for an absent weight / bias). One invocation per texel.
#include "vkc_common.glslh"

layout(local_size_x = LOCAL_SIZE_X, local_size_y = LOCAL_SIZE_Y, local_size_z = LOCAL_SIZE_Z) in;

#include "vkc_out_in.glslh"
layout(set = 0, binding = 2, std430) restrict readonly buffer WeightBuf { T t_weight[]; };
layout(set = 0, binding = 3, std430) restrict readonly buffer BiasBuf { T t_bias[]; };
layout(set = 0, binding = 4, std430) restrict readonly buffer MeanBuf { T t_mean[]; };
layout(set = 0, binding = 5, std430) restrict readonly buffer VarBuf { T t_var[]; };

layout(push_constant) uniform Params {
  ivec4 sizes;
  float eps;
} p;

void main() {
  const int idx = global_index();
  const ivec3 extents = texture_extents(p.sizes, 2);
  if (idx >= extents.x * extents.y * extents.z) return;
  const ivec3 pos = index_to_pos(idx, extents);
  const int c0 = texel_to_whcn(pos, p.sizes, 2).z;
  vec4 scale = vec4(0.0), shift = vec4(0.0);
  for (int lane = 0; lane < 4 && c0 + lane < p.sizes.z; ++lane) {
    const int c = c0 + lane;
    scale[lane] = float(t_weight[c]) * inversesqrt(float(t_var[c]) + p.eps);
    shift[lane] = float(t_bias[c]) - float(t_mean[c]) * scale[lane];
  }
  imageStore(t_out, pos, VEC4_T(vec4(imageLoad(t_in, pos)) * scale + shift));
}
