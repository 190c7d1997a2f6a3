#version 450
// out (WHCN w) = in (w with w[dim] = index[w[dim]]) (index_select) or index[w] (gather, ELEMENTS 1);
// negative indices count from the end; one outside the input gives 0.
#include "vkc_common.glslh"

layout(local_size_x = LOCAL_SIZE_X, local_size_y = LOCAL_SIZE_Y, local_size_z = LOCAL_SIZE_Z) in;

#include "vkc_out_in.glslh"
#if defined(STORAGE_buffer)
layout(set = 0, binding = 2, std430) restrict readonly buffer IndexBuf { int t_index[]; };
#else
layout(set = 0, binding = 2, rgba32i) uniform restrict readonly iimage3D t_index;
#endif

layout(push_constant) uniform Params {
  ivec4 out_sizes;
  ivec4 in_sizes;
  ivec4 index_sizes;
  ivec4 packed_dims;  // out, in, index
  int dim;
} p;

// The index at WHCN position w of the index tensor.
int index_at(ivec4 w) {
#if defined(STORAGE_buffer)
  return t_index[whcn_to_index(w, p.index_sizes)];
#else
  const ivec4 t = whcn_to_texel(w, p.index_sizes, p.packed_dims.z);
  return imageLoad(t_index, t.xyz)[t.w];
#endif
}

SCALAR_T source(ivec4 w) {
  ivec4 s = w;
#if ELEMENTS == 1
  const int j = index_at(w);  // gather: the index tensor is shaped like the output
#else
  const int j = index_at(ivec4(w[p.dim], 0, 0, 0));
#endif
  s[p.dim] = j < 0 ? j + p.in_sizes[p.dim] : j;  // negative indices count from the end (ONNX Gather)
  if (!in_bounds(s, p.in_sizes)) return SCALAR_T(0);
  return SCALAR_T(TENSOR_AT(t_in, s, p.in_sizes, p.packed_dims.y));
}

#include "vkc_gather_main.glslh"
