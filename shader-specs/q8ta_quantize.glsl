#version 450
// A float tensor to int8 activations (see q8ta_quantize.yaml).
#include "vkc_common.glslh"

layout(local_size_x = LOCAL_SIZE_X, local_size_y = LOCAL_SIZE_Y, local_size_z = LOCAL_SIZE_Z) in;

layout(set = 0, binding = 0, std430) restrict writeonly buffer OutBuf { int t_out[]; };
#if defined(STORAGE_buffer)
layout(set = 0, binding = 1, std430) restrict readonly buffer InBuf { T t_in[]; };
#else
layout(set = 0, binding = 1, IMAGE_FORMAT) uniform restrict readonly IMAGE_T t_in;
#endif

layout(push_constant) uniform Params {
  ivec4 sizes;
  float scale;
  int zero_point;
  int qmin;
  int qmax;
  int packed_dim;
} p;

void main() {
  const int i = global_index();
  if (i >= numel(p.sizes)) return;
  const float x = float(TENSOR_AT(t_in, index_to_whcn(i, p.sizes), p.sizes, p.packed_dim));
  t_out[i] = clamp(int(roundEven(x / p.scale)) + p.zero_point, p.qmin, p.qmax);
}
