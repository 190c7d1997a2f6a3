#version 450
// out[..., d] = weight[indices[...], d]: out's WHCN (d, a, b, c) reads indices at WHCN (a, b, c, 0).
// Indices are int32 (int64 models run with downcast_64_bit); one outside [0, V) gives 0.
#include "vkc_common.glslh"

layout(local_size_x = LOCAL_SIZE_X, local_size_y = LOCAL_SIZE_Y, local_size_z = LOCAL_SIZE_Z) in;

#if defined(STORAGE_buffer)
layout(set = 0, binding = 0, std430) restrict writeonly buffer OutBuf { T t_out[]; };
layout(set = 0, binding = 1, std430) restrict readonly buffer IdxBuf { int t_idx[]; };
#else
layout(set = 0, binding = 0, IMAGE_FORMAT) uniform restrict writeonly IMAGE_T t_out;
layout(set = 0, binding = 1, rgba32i) uniform restrict readonly iimage3D t_idx;
#endif
layout(set = 0, binding = 2, std430) restrict readonly buffer WeightBuf { T t_weight[]; };

layout(push_constant) uniform Params {
  ivec4 out_sizes;
  ivec4 idx_sizes;
  ivec4 packed_dims;  // out, indices
  int rows;
} p;

SCALAR_T source(ivec4 w) {
  const int row = TENSOR_AT(t_idx, ivec4(w.yzw, 0), p.idx_sizes, p.packed_dims.y);
  return row >= 0 && row < p.rows ? float(t_weight[row * p.out_sizes.x + w.x]) : 0.0;
}

#include "vkc_gather_main.glslh"
