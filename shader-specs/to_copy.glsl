#version 450
// out = the input converted to the output's dtype, element by element (texel by texel).
#if defined(IN_DTYPE_f16)
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#endif
#include "vkc_common.glslh"

#if defined(IN_DTYPE_i32)
#define IN_T int
#define IN_IMAGE_T iimage3D
#define IN_FORMAT rgba32i
#elif defined(IN_DTYPE_f16)
#define IN_T float16_t
#define IN_IMAGE_T image3D
#define IN_FORMAT rgba16f
#else
#define IN_T float
#define IN_IMAGE_T image3D
#define IN_FORMAT rgba32f
#endif

layout(local_size_x = LOCAL_SIZE_X, local_size_y = LOCAL_SIZE_Y, local_size_z = LOCAL_SIZE_Z) in;

#if defined(STORAGE_buffer)
layout(set = 0, binding = 0, std430) restrict writeonly buffer OutBuf { T t_out[]; };
layout(set = 0, binding = 1, std430) restrict readonly buffer InBuf { IN_T t_in[]; };
#else
layout(set = 0, binding = 0, IMAGE_FORMAT) uniform restrict writeonly IMAGE_T t_out;
layout(set = 0, binding = 1, IN_FORMAT) uniform restrict readonly IN_IMAGE_T t_in;
#endif

layout(push_constant) uniform Params {
  ivec4 range;
} p;

void main() {
  const int i = global_index();
#if defined(STORAGE_buffer)
  if (i >= p.range.x) return;
  t_out[i] = T(SCALAR_T(t_in[i]));
#else
  if (i >= p.range.x * p.range.y * p.range.z) return;
  const ivec3 pos = index_to_pos(i, p.range.xyz);
  imageStore(t_out, pos, VEC4_T(imageLoad(t_in, pos)));
#endif
}
