#version 450
// out = cond != 0 ? self : other, each operand broadcast (a size-1 dim reads index 0).
#include "vkc_common.glslh"

layout(local_size_x = LOCAL_SIZE_X, local_size_y = LOCAL_SIZE_Y, local_size_z = LOCAL_SIZE_Z) in;

#if defined(STORAGE_buffer)
layout(set = 0, binding = 0, std430) restrict writeonly buffer OutBuf { T t_out[]; };
layout(set = 0, binding = 1, std430) restrict readonly buffer CondBuf { int t_cond[]; };
layout(set = 0, binding = 2, std430) restrict readonly buffer SelfBuf { T t_self[]; };
layout(set = 0, binding = 3, std430) restrict readonly buffer OtherBuf { T t_other[]; };
#define AT(t, w, sizes, packed) t[whcn_to_index(min(w, sizes - 1), sizes)]
#else
layout(set = 0, binding = 0, IMAGE_FORMAT) uniform restrict writeonly IMAGE_T t_out;
layout(set = 0, binding = 1, rgba32i) uniform restrict readonly iimage3D t_cond;
layout(set = 0, binding = 2, IMAGE_FORMAT) uniform restrict readonly IMAGE_T t_self;
layout(set = 0, binding = 3, IMAGE_FORMAT) uniform restrict readonly IMAGE_T t_other;
#define AT(t, w, sizes, packed) imageLoad(t, whcn_to_texel(min(w, sizes - 1), sizes, packed).xyz)[whcn_to_texel(min(w, sizes - 1), sizes, packed).w]
#endif

layout(push_constant) uniform Params {
  ivec4 out_sizes;
  ivec4 cond_sizes;
  ivec4 self_sizes;
  ivec4 other_sizes;
  ivec4 packed_dims;
} p;

SCALAR_T pick(ivec4 w) {
  return AT(t_cond, w, p.cond_sizes, p.packed_dims.y) != 0 ? SCALAR_T(AT(t_self, w, p.self_sizes, p.packed_dims.z))
                                                          : SCALAR_T(AT(t_other, w, p.other_sizes, p.packed_dims.w));
}

void main() {
  const int i = global_index();
#if defined(STORAGE_buffer)
  if (i >= numel(p.out_sizes)) return;
  t_out[i] = T(pick(index_to_whcn(i, p.out_sizes)));
#else
  const ivec3 extents = texture_extents(p.out_sizes, p.packed_dims.x);
  if (i >= extents.x * extents.y * extents.z) return;
  const ivec3 pos = index_to_pos(i, extents);
  const ivec4 base = texel_to_whcn(pos, p.out_sizes, p.packed_dims.x);
  VEC4_T y = VEC4_T(0);
  for (int lane = 0; lane < 4; ++lane) {
    const ivec4 w = base + lane * dim_unit(p.packed_dims.x);
    if (!in_bounds(w, p.out_sizes)) break;
    y[lane] = pick(w);
  }
  imageStore(t_out, pos, y);
#endif
}
