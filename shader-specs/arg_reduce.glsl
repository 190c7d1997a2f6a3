#version 450
// out[w] = the first k along `dim` where in[w with dim = k] is the maximum (MAX 1) or minimum.
// Buffers: the output's linear index is its keepdim-shaped index (dropping a size-1 dim keeps the
// order). Textures: the output has the keepdim shape.
#include "vkc_in_types.glslh"
#include "vkc_common.glslh"

layout(local_size_x = LOCAL_SIZE_X, local_size_y = LOCAL_SIZE_Y, local_size_z = LOCAL_SIZE_Z) in;

#include "vkc_out_in.glslh"

layout(push_constant) uniform Params {
  ivec4 kept_sizes;
  ivec4 in_sizes;
  ivec4 packed_dims;  // out, in
  int dim;
} p;

#if defined(IN_DTYPE_i32)
#define VAL_T int
#define IS_NAN(v) false
#else
#define VAL_T float
#define IS_NAN(v) isnan(v)
#endif

VAL_T load(ivec4 w) { return VAL_T(TENSOR_AT(t_in, w, p.in_sizes, p.packed_dims.y)); }

int best_index(ivec4 w) {
  int best = 0;
  w[p.dim] = 0;
  VAL_T bv = load(w);
  for (int k = 1; k < p.in_sizes[p.dim] && !IS_NAN(bv); ++k) {
    w[p.dim] = k;
    const VAL_T v = load(w);
#if MAX
    if (IS_NAN(v) || v > bv) {
#else
    if (IS_NAN(v) || v < bv) {
#endif
      best = k;
      bv = v;
    }
  }
  return best;
}

void main() {
  const int i = global_index();
#if defined(STORAGE_buffer)
  if (i >= numel(p.kept_sizes)) return;
  t_out[i] = T(best_index(index_to_whcn(i, p.kept_sizes)));
#else
  const ivec3 extents = texture_extents(p.kept_sizes, p.packed_dims.x);
  if (i >= extents.x * extents.y * extents.z) return;
  const ivec3 pos = index_to_pos(i, extents);
  const ivec4 base = texel_to_whcn(pos, p.kept_sizes, p.packed_dims.x);
  ivec4 r = ivec4(0);
  for (int lane = 0; lane < 4; ++lane) {
    const ivec4 w = base + lane * dim_unit(p.packed_dims.x);
    if (in_bounds(w, p.kept_sizes)) r[lane] = best_index(w);
  }
  imageStore(t_out, pos, r);
#endif
}
