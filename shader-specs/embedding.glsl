#version 450
// out[..., d] = weight[indices[...], d]; an index outside [0, V) gives 0 (vkc_embedding.glslh).
#include "vkc_common.glslh"

layout(local_size_x = LOCAL_SIZE_X, local_size_y = LOCAL_SIZE_Y, local_size_z = LOCAL_SIZE_Z) in;

layout(set = 0, binding = 2, std430) restrict readonly buffer WeightBuf { T t_weight[]; };

layout(push_constant) uniform Params {
  ivec4 out_sizes;
  ivec4 idx_sizes;
  ivec4 packed_dims;  // out, indices
  int rows;
#if defined(VKC_CHAIN_BINDING)
  ivec4 chain;  // chained dispatches (vkc_chain.glslh)
#endif
} p;

#include "vkc_embedding.glslh"

SCALAR_T source(ivec4 w) {
  const int row = embedding_row(w);
  return row >= 0 ? float(t_weight[row * p.out_sizes.x + w.x]) : 0.0;
}

#include "vkc_gather_main.glslh"
