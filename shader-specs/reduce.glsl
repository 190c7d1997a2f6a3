#version 450
// Reductions over a set of dims: out = FINAL(fold of ACCUMULATE over the reduced box).
// The output keeps the reduced dims with size 1 (keepdim; without keepdim the runtime views
// the result). reduce_mask bit d (0 = W, 1 = H, 2 = C, 3 = N) marks a reduced dim.
// Buffer variants: one invocation per output element. Texture variants: one invocation per
// output texel (packed_dims.x = out, .y = in).
#include "vkc_common.glslh"

layout(local_size_x = LOCAL_SIZE_X, local_size_y = LOCAL_SIZE_Y, local_size_z = LOCAL_SIZE_Z) in;

#if defined(STORAGE_buffer)
layout(set = 0, binding = 0, std430) restrict writeonly buffer OutBuf { T t_out[]; };
layout(set = 0, binding = 1, std430) restrict readonly buffer InBuf { T t_in[]; };
#else
layout(set = 0, binding = 0, IMAGE_FORMAT) uniform restrict writeonly IMAGE_T t_out;
layout(set = 0, binding = 1, IMAGE_FORMAT) uniform restrict readonly IMAGE_T t_in;
#endif

layout(push_constant) uniform Params {
  ivec4 out_sizes;
  ivec4 in_sizes;
  ivec4 packed_dims;
  int reduce_mask;
} p;

SCALAR_T load_in(ivec4 w) {
#if defined(STORAGE_buffer)
  return SCALAR_T(t_in[whcn_to_index(w, p.in_sizes)]);
#else
  const ivec4 t = whcn_to_texel(w, p.in_sizes, p.packed_dims.y);
  return VEC4_T(imageLoad(t_in, t.xyz))[t.w];
#endif
}

// Reduces the box of input elements that maps to output element `w`.
SCALAR_T reduce_at(ivec4 w) {
  ivec4 extent = ivec4(1);
  for (int d = 0; d < 4; ++d)
    if ((p.reduce_mask & (1 << d)) != 0) extent[d] = p.in_sizes[d];
  const int count = numel(extent);
  SCALAR_T acc = INIT;
  for (int r = 0; r < count; ++r) {
    const ivec4 offset = index_to_whcn(r, extent);
    const SCALAR_T x = load_in(w + offset);
    acc = ACCUMULATE;
  }
  return FINAL;
}

void main() {
  const int i = global_index();
#if defined(STORAGE_buffer)
  if (i >= numel(p.out_sizes)) return;
  t_out[i] = T(reduce_at(index_to_whcn(i, p.out_sizes)));
#else
  const ivec3 extents = texture_extents(p.out_sizes, p.packed_dims.x);
  if (i >= extents.x * extents.y * extents.z) return;
  const ivec3 pos = index_to_pos(i, extents);
  const ivec4 base = texel_to_whcn(pos, p.out_sizes, p.packed_dims.x);
  VEC4_T r = VEC4_T(0);
  for (int lane = 0; lane < 4; ++lane) {
    const ivec4 w = base + lane * dim_unit(p.packed_dims.x);
    if (!in_bounds(w, p.out_sizes)) break;
    r[lane] = reduce_at(w);
  }
  imageStore(t_out, pos, r);
#endif
}
