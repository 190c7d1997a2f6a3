#version 450
// out = cond != 0 ? self : other, each operand broadcast (a size-1 dim reads index 0).
#include "vkc_common.glslh"

layout(local_size_x = LOCAL_SIZE_X, local_size_y = LOCAL_SIZE_Y, local_size_z = LOCAL_SIZE_Z) in;

#include "vkc_out.glslh"
#if defined(STORAGE_buffer)
layout(set = 0, binding = 1, std430) restrict readonly buffer CondBuf { int t_cond[]; };
layout(set = 0, binding = 2, std430) restrict readonly buffer SelfBuf { T t_self[]; };
layout(set = 0, binding = 3, std430) restrict readonly buffer OtherBuf { T t_other[]; };
#else
layout(set = 0, binding = 1, rgba32i) uniform restrict readonly iimage3D t_cond;
layout(set = 0, binding = 2, IMAGE_FORMAT) uniform restrict readonly IMAGE_T t_self;
layout(set = 0, binding = 3, IMAGE_FORMAT) uniform restrict readonly IMAGE_T t_other;
#endif

layout(push_constant) uniform Params {
  ivec4 out_sizes;
  ivec4 cond_sizes;
  ivec4 self_sizes;
  ivec4 other_sizes;
  ivec4 packed_dims;
} p;

// Each operand broadcast: a size-1 dim reads index 0.
#define OPERAND(t, w, sizes, packed) TENSOR_AT(t, min(w, sizes - 1), sizes, packed)

SCALAR_T source(ivec4 w) {
  return OPERAND(t_cond, w, p.cond_sizes, p.packed_dims.y) != 0
             ? SCALAR_T(OPERAND(t_self, w, p.self_sizes, p.packed_dims.z))
             : SCALAR_T(OPERAND(t_other, w, p.other_sizes, p.packed_dims.w));
}

#include "vkc_gather_main.glslh"
