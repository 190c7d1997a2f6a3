#version 450
// Element-wise binary operators with broadcasting: out = OPERATOR(X = in, Y = other).
// Broadcasting: an input dim of size 1 is repeated (its coordinate is min(out, size - 1)).
// Buffer variants: one invocation per output element (contiguous buffers).
// Texture variants: one invocation per output texel; each input may be packed along any dim
// (packed_dims.x = out, .y = in, .z = other).
#include "vkc_common.glslh"
#include "vkc_math.glslh"

layout(local_size_x = LOCAL_SIZE_X, local_size_y = LOCAL_SIZE_Y, local_size_z = LOCAL_SIZE_Z) in;

#include "vkc_out_in.glslh"
#if defined(STORAGE_buffer)
layout(set = 0, binding = 2, std430) restrict readonly buffer OtherBuf { T t_other[]; };
#else
layout(set = 0, binding = 2, IMAGE_FORMAT) uniform restrict readonly IMAGE_T t_other;
#endif

layout(push_constant) uniform Params {
  ivec4 out_sizes;
  ivec4 in_sizes;
  ivec4 other_sizes;
  ivec4 packed_dims;
  float alpha;
  int clamped;  // the runtime fused a following relu / clamp into this dispatch: clamp(r, lo, hi)
  float lo;
  float hi;
} p;

#if defined(DTYPE_i32)
#define EPILOGUE(r) (r)
#else
#define EPILOGUE(r) (p.clamped != 0 ? clamp(r, VEC4_T(p.lo), VEC4_T(p.hi)) : (r))
#endif

#define ALPHA (p.alpha)

#include "vkc_broadcast_pair.glslh"

void main() {
  const int i = global_index();
#if defined(STORAGE_buffer)
  if (i >= numel(p.out_sizes)) return;
  const ivec4 w = index_to_whcn(i, p.out_sizes);
  const VEC4_T X = VEC4_T(SCALAR_T(t_in[whcn_to_index(min(w, p.in_sizes - 1), p.in_sizes)]));
  const VEC4_T Y = VEC4_T(SCALAR_T(t_other[whcn_to_index(min(w, p.other_sizes - 1), p.other_sizes)]));
  const VEC4_T r = EPILOGUE(OPERATOR);
  t_out[i] = T(r.x);
#else
  const ivec3 extents = texture_extents(p.out_sizes, p.packed_dims.x);
  if (i >= extents.x * extents.y * extents.z) return;
  const ivec3 pos = index_to_pos(i, extents);
  VEC4_T X, Y;
  if (p.in_sizes == p.out_sizes && p.other_sizes == p.out_sizes && p.packed_dims.y == p.packed_dims.x &&
      p.packed_dims.z == p.packed_dims.x) {
    X = VEC4_T(imageLoad(t_in, pos));
    Y = VEC4_T(imageLoad(t_other, pos));
  } else {
    X = VEC4_T(0);
    Y = VEC4_T(0);
    BROADCAST_PAIR(VEC4_T, texel_to_whcn(pos, p.out_sizes, p.packed_dims.x), X, Y)
  }
  const VEC4_T r = EPILOGUE(OPERATOR);
  imageStore(t_out, pos, r);
#endif
}
