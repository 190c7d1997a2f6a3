#version 450
// out (WHCN w) = in (SOURCE, an ivec4 expression in w, r = the factor and the push constants).
#include "vkc_common.glslh"

layout(local_size_x = LOCAL_SIZE_X, local_size_y = LOCAL_SIZE_Y, local_size_z = LOCAL_SIZE_Z) in;

#include "vkc_out_in.glslh"

layout(push_constant) uniform Params {
  ivec4 out_sizes;
  ivec4 in_sizes;
  ivec4 packed_dims;  // out, in
  int factor;
} p;

SCALAR_T source(ivec4 w) {
  const int r = p.factor;
  const ivec4 s = SOURCE;
  return SCALAR_T(TENSOR_AT(t_in, s, p.in_sizes, p.packed_dims.y));
}

#include "vkc_gather_main.glslh"
