#version 450
// fp16 x fp16 -> fp32-accumulated matrix product on cooperative matrices (16x16x16 tiles,
// subgroup scope), written with GL_NV_cooperative_matrix; codegen also derives the
// SPV_KHR_cooperative_matrix module from it (khr_from_nv).
//   matmul: out[M, N] = A[M, K] x B[K, N]        (B row-major, B_LAYOUT kn)
//   linear: out[M, N] = A[M, K] x W[N, K]^T      (W read column-major, B_LAYOUT nk)
// A workgroup computes a 64x64 output tile as four 32x32 blocks; its subgroups take the
// blocks in turn, so any subgroup size that divides 128 works. M, N and K must be
// multiples of 16. Dispatch: (ceil(N / 64), ceil(M / 64), 1) workgroups.
#extension GL_NV_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_shader_16bit_storage : require

layout(local_size_x = LOCAL_SIZE_X, local_size_y = LOCAL_SIZE_Y, local_size_z = LOCAL_SIZE_Z) in;

#if defined(DTYPE_f16)
#define OUT_T float16_t
#else
#define OUT_T float
#endif

layout(set = 0, binding = 0, std430) restrict writeonly buffer OutBuf { OUT_T t_out[]; };
layout(set = 0, binding = 1, std430) restrict readonly buffer ABuf { float16_t t_a[]; };
layout(set = 0, binding = 2, std430) restrict readonly buffer BBuf { float16_t t_b[]; };

layout(push_constant) uniform Params {
  ivec4 mnk;  // (M, N, K, 0)
} p;

void main() {
  const uint M = uint(p.mnk.x), N = uint(p.mnk.y), K = uint(p.mnk.z);
  const uint tile_n = gl_WorkGroupID.x * 64u, tile_m = gl_WorkGroupID.y * 64u;
  for (uint blk = gl_SubgroupID; blk < 4u; blk += gl_NumSubgroups) {
    const uint m0 = tile_m + (blk / 2u) * 32u, n0 = tile_n + (blk % 2u) * 32u;
    if (m0 >= M || n0 >= N) continue;
    fcoopmatNV<32, gl_ScopeSubgroup, 16, 16> acc[2][2];
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 2; ++j) acc[i][j] = fcoopmatNV<32, gl_ScopeSubgroup, 16, 16>(0.0);
    for (uint k = 0u; k < K; k += 16u) {
      fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> a[2];
      fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> b[2];
      for (int i = 0; i < 2; ++i)
        if (m0 + 16u * i < M) coopMatLoadNV(a[i], t_a, (m0 + 16u * i) * K + k, K, false);
      for (int j = 0; j < 2; ++j) {
        if (n0 + 16u * j >= N) continue;
#if defined(B_LAYOUT_kn)
        coopMatLoadNV(b[j], t_b, k * N + n0 + 16u * j, N, false);
#else
        coopMatLoadNV(b[j], t_b, (n0 + 16u * j) * K + k, K, true);
#endif
      }
      for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 2; ++j) acc[i][j] = coopMatMulAddNV(a[i], b[j], acc[i][j]);
    }
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 2; ++j) {
        if (m0 + 16u * i >= M || n0 + 16u * j >= N) continue;
        const uint offset = (m0 + 16u * i) * N + n0 + 16u * j;
#if defined(DTYPE_f16)
        fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> h = fcoopmatNV<16, gl_ScopeSubgroup, 16, 16>(acc[i][j]);
        coopMatStoreNV(h, t_out, offset, N, false);
#else
        coopMatStoreNV(acc[i][j], t_out, offset, N, false);
#endif
      }
  }
}
