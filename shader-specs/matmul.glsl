#version 450
// Batched matrix product of two tensors: out[b, m, n] = sum_k mat1[b, m, k] * mat2[b, k, n]
// (aten.mm / aten.bmm when mat2 is not a constant). WHCN sizes: mat1 (K, M, B, B0),
// mat2 (N, K, B, B0), out (N, M, B, B0); batch dims of size 1 broadcast.
// Buffer variants: contiguous, one invocation per output element.
// Texture variants: width-packed, one invocation per output texel (4 outputs along n).
#include "vkc_common.glslh"

layout(local_size_x = LOCAL_SIZE_X, local_size_y = LOCAL_SIZE_Y, local_size_z = LOCAL_SIZE_Z) in;

#include "vkc_out.glslh"
#if defined(STORAGE_buffer)
layout(set = 0, binding = 1, std430) restrict readonly buffer Mat1Buf { T t_mat1[]; };
layout(set = 0, binding = 2, std430) restrict readonly buffer Mat2Buf { T t_mat2[]; };
#else
layout(set = 0, binding = 1, IMAGE_FORMAT) uniform restrict readonly IMAGE_T t_mat1;
layout(set = 0, binding = 2, IMAGE_FORMAT) uniform restrict readonly IMAGE_T t_mat2;
#endif

layout(push_constant) uniform Params {
  ivec4 out_sizes;
  ivec4 mat1_sizes;
  ivec4 mat2_sizes;
} p;

void main() {
  const int idx = global_index();
  const int K = p.mat1_sizes.x;
#if defined(STORAGE_buffer)
  if (idx >= numel(p.out_sizes)) return;
  const ivec4 o = index_to_whcn(idx, p.out_sizes);
  const ivec2 b1 = min(o.zw, p.mat1_sizes.zw - 1), b2 = min(o.zw, p.mat2_sizes.zw - 1);
  float acc = 0.0;
  for (int k = 0; k < K; ++k)
    acc += float(t_mat1[whcn_to_index(ivec4(k, o.y, b1), p.mat1_sizes)]) *
           float(t_mat2[whcn_to_index(ivec4(o.x, k, b2), p.mat2_sizes)]);
  t_out[idx] = T(acc);
#else
  const ivec3 extents = texture_extents(p.out_sizes, 0);
  if (idx >= extents.x * extents.y * extents.z) return;
  const ivec3 pos = index_to_pos(idx, extents);
  const ivec4 o = texel_to_whcn(pos, p.out_sizes, 0);
  const ivec2 b1 = min(o.zw, p.mat1_sizes.zw - 1), b2 = min(o.zw, p.mat2_sizes.zw - 1);
  const int z1 = b1.y * p.mat1_sizes.z + b1.x, z2 = b2.y * p.mat2_sizes.z + b2.x;
  vec4 acc = vec4(0.0);
  for (int k4 = 0; k4 < div_up4(K); ++k4) {
    const vec4 a = vec4(imageLoad(t_mat1, ivec3(k4, o.y, z1)));
    for (int j = 0; j < 4 && 4 * k4 + j < K; ++j) acc += a[j] * vec4(imageLoad(t_mat2, ivec3(pos.x, 4 * k4 + j, z2)));
  }
  imageStore(t_out, pos, VEC4_T(acc));
#endif
}
