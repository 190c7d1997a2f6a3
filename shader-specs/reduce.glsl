#version 450
// Reductions over a set of dims: out = FINAL(fold of ACCUMULATE over the reduced box).
// The output keeps the reduced dims with size 1 (keepdim; without keepdim the runtime views
// the result). reduce_mask bit d (0 = W, 1 = H, 2 = C, 3 = N) marks a reduced dim.
// One workgroup per output element (buffer) or output texel (texture; packed_dims.x = out,
// .y = in): its LOCAL_SIZE_X invocations stride over the reduced box, then combine their
// partial results in shared memory. (One invocation folding a whole box serially is slow on a
// GPU, and Mesa's llvmpipe stops a shader after 65535 loop iterations.)
#include "vkc_common.glslh"

layout(local_size_x = LOCAL_SIZE_X, local_size_y = LOCAL_SIZE_Y, local_size_z = LOCAL_SIZE_Z) in;

#include "vkc_out_in.glslh"

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

SCALAR_T accumulate(SCALAR_T acc, SCALAR_T x) { return ACCUMULATE; }
SCALAR_T finalize(SCALAR_T acc, int count) { return FINAL; }

// Four lanes (one per output element of a texel; one used for buffers).
shared SCALAR_T partial[4][LOCAL_SIZE_X];

void main() {
  const int group = int(gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x);
  const int tid = int(gl_LocalInvocationID.x);
  ivec4 extent = ivec4(1);
  for (int d = 0; d < 4; ++d)
    if ((p.reduce_mask & (1 << d)) != 0) extent[d] = p.in_sizes[d];
  const int count = numel(extent);

#if defined(STORAGE_buffer)
  const bool in_range = group < numel(p.out_sizes);
  const ivec4 base = in_range ? index_to_whcn(group, p.out_sizes) : ivec4(0);
  const int lanes = in_range ? 1 : 0;
  const ivec4 unit = ivec4(0);
#else
  const ivec3 extents = texture_extents(p.out_sizes, p.packed_dims.x);
  const bool in_range = group < extents.x * extents.y * extents.z;
  const ivec3 pos = in_range ? index_to_pos(group, extents) : ivec3(0);
  const ivec4 base = texel_to_whcn(pos, p.out_sizes, p.packed_dims.x);
  const ivec4 unit = dim_unit(p.packed_dims.x);
  int lanes = 0;
  while (in_range && lanes < 4 && in_bounds(base + lanes * unit, p.out_sizes)) ++lanes;
#endif

  SCALAR_T acc[4] = SCALAR_T[4](INIT, INIT, INIT, INIT);
#if defined(STORAGE_buffer)
  const bool whole = false;
#else
  // The packed dim kept (and packed alike in and out): the output texel's lanes are one input
  // texel's, read once for all of them.
  const bool whole = p.packed_dims.x == p.packed_dims.y && (p.reduce_mask & (1 << p.packed_dims.y)) == 0;
#endif
  for (int r = tid; r < count; r += LOCAL_SIZE_X) {
    const ivec4 offset = index_to_whcn(r, extent);
#if !defined(STORAGE_buffer)
    if (whole) {
      const VEC4_T t = VEC4_T(imageLoad(t_in, whcn_to_texel(base + offset, p.in_sizes, p.packed_dims.y).xyz));
      for (int lane = 0; lane < lanes; ++lane) acc[lane] = accumulate(acc[lane], t[lane]);
      continue;
    }
#endif
    for (int lane = 0; lane < lanes; ++lane) acc[lane] = accumulate(acc[lane], load_in(base + lane * unit + offset));
  }
  for (int lane = 0; lane < 4; ++lane) partial[lane][tid] = acc[lane];
  barrier();
  for (int stride = LOCAL_SIZE_X / 2; stride > 0; stride >>= 1) {
    if (tid < stride)
      for (int lane = 0; lane < 4; ++lane)
        partial[lane][tid] = accumulate(partial[lane][tid], partial[lane][tid + stride]);
    barrier();
  }
  if (tid != 0 || !in_range) return;
#if defined(STORAGE_buffer)
  t_out[group] = T(finalize(partial[0][0], count));
#else
  VEC4_T r = VEC4_T(0);
  for (int lane = 0; lane < lanes; ++lane) r[lane] = finalize(partial[lane][0], count);
  imageStore(t_out, pos, r);
#endif
}
