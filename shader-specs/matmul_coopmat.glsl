#version 450
// fp16 x fp16 -> fp32-accumulated matrix product on cooperative matrices (16x16x16 tiles,
// subgroup scope), written with GL_NV_cooperative_matrix; codegen also derives the
// SPV_KHR_cooperative_matrix module from it (khr_from_nv).
//   matmul: out[M, N] = A[M, K] x B[K, N]        (B row-major, B_LAYOUT kn)
//   linear: out[M, N] = A[M, K] x W[N, K]^T      (W read column-major, B_LAYOUT nk)
// A workgroup of 256 invocations computes a 128x128 output tile. Per 32-wide step of K it
// stages the A and B tiles in shared memory (16-byte global loads, zero past the matrix edges),
// then its subgroups multiply from there: eight 64x32 blocks of 4x2 accumulators, one per
// subgroup (with fewer than eight subgroups, in several passes over K). M, N and K must be
// multiples of 16 (rows are read 8 halves at a time). Dispatch: (ceil(N / 128), ceil(M / 128), 1).
#extension GL_NV_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_shader_16bit_storage : require

layout(local_size_x = LOCAL_SIZE_X, local_size_y = LOCAL_SIZE_Y, local_size_z = LOCAL_SIZE_Z) in;

#if defined(DTYPE_f16)
// f16 outputs are written two at a time as packed 32-bit words (16-bit stores were far slower).
layout(set = 0, binding = 0, std430) restrict writeonly buffer OutBuf { uint t_out[]; };
#else
layout(set = 0, binding = 0, std430) restrict writeonly buffer OutBuf { float t_out[]; };
#endif
layout(set = 0, binding = 1, std430) restrict readonly buffer ABuf { uvec4 t_a[]; };  // 8 halves each
layout(set = 0, binding = 2, std430) restrict readonly buffer BBuf { uvec4 t_b[]; };

layout(push_constant) uniform Params {
  ivec4 mnk;  // (M, N, K, 0)
} p;

const uint BM = 128u, BN = 128u, BK = 32u;
const uint A_STRIDE = BK + 8u;  // halves per staged row of A (and of W for linear); padded
const uint B_STRIDE = BN + 8u;  // halves per staged row of B (matmul)
shared float16_t sa[BM * A_STRIDE];
#if defined(B_LAYOUT_kn)
shared float16_t sb[BK * B_STRIDE];
#else
shared float16_t sb[BN * A_STRIDE];
#endif


// 8 halves of `v` into shared row memory starting at `at`.
#define STORE8(arr, at, v)                                   \
  {                                                          \
    const uvec4 v_ = (v);                                    \
    for (uint q_ = 0u; q_ < 4u; ++q_) {                      \
      const vec2 h_ = unpackHalf2x16(v_[q_]);                \
      arr[(at) + 2u * q_] = float16_t(h_.x);                 \
      arr[(at) + 2u * q_ + 1u] = float16_t(h_.y);            \
    }                                                        \
  }

#if defined(DTYPE_f16)
// f16 outputs leave through shared memory: converting a whole accumulator to an f16 cooperative
// matrix kept every accumulator live twice and was 3x slower on the H200.
shared float so[8][16 * 16];
#endif

void main() {
  const uint M = uint(p.mnk.x), N = uint(p.mnk.y), K = uint(p.mnk.z);
  const uint tile_n = gl_WorkGroupID.x * BN, tile_m = gl_WorkGroupID.y * BM;
  const uint tid = gl_LocalInvocationID.x;
  const uint threads = gl_WorkGroupSize.x;
  // Eight blocks of 64 rows x 32 columns (block b: rows (b / 4) * 64, columns (b % 4) * 32), one
  // per subgroup per pass; with fewer than eight subgroups the passes repeat the K loop (all
  // subgroups run the same number of passes, so the barriers match).
  const uint passes = (8u + gl_NumSubgroups - 1u) / gl_NumSubgroups;
  for (uint pass = 0u; pass < passes; ++pass) {
    const uint blk = gl_SubgroupID + pass * gl_NumSubgroups;
    const bool owner = blk < 8u;
    const uint bm = (blk / 4u) * 64u, bn = (blk % 4u) * 32u;
    fcoopmatNV<32, gl_ScopeSubgroup, 16, 16> acc[4][2];
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 2; ++j) acc[i][j] = fcoopmatNV<32, gl_ScopeSubgroup, 16, 16>(0.0);

    for (uint k0 = 0u; k0 < K; k0 += BK) {
      // A tile: 128 rows x 32 halves = 512 loads of 8 halves.
      for (uint i = tid; i < BM * BK / 8u; i += threads) {
        const uint row = i / (BK / 8u), col = (i % (BK / 8u)) * 8u;
        const uint m = tile_m + row, k = k0 + col;
        STORE8(sa, row * A_STRIDE + col, (m < M && k < K) ? t_a[(m * K + k) / 8u] : uvec4(0u));
      }
#if defined(B_LAYOUT_kn)
      // B tile: 32 rows (k) x 128 halves (n).
      for (uint i = tid; i < BK * BN / 8u; i += threads) {
        const uint row = i / (BN / 8u), col = (i % (BN / 8u)) * 8u;
        const uint k = k0 + row, n = tile_n + col;
        STORE8(sb, row * B_STRIDE + col, (k < K && n < N) ? t_b[(k * N + n) / 8u] : uvec4(0u));
      }
#else
      // W tile: 128 rows (n) x 32 halves (k).
      for (uint i = tid; i < BN * BK / 8u; i += threads) {
        const uint row = i / (BK / 8u), col = (i % (BK / 8u)) * 8u;
        const uint n = tile_n + row, k = k0 + col;
        STORE8(sb, row * A_STRIDE + col, (n < N && k < K) ? t_b[(n * K + k) / 8u] : uvec4(0u));
      }
#endif
      barrier();
      if (owner) {
        for (uint kk = 0u; kk < BK; kk += 16u) {
          fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> a[4];
          fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> b[2];
          for (uint i = 0u; i < 4u; ++i) coopMatLoadNV(a[i], sa, (bm + 16u * i) * A_STRIDE + kk, A_STRIDE, false);
          for (uint j = 0u; j < 2u; ++j) {
#if defined(B_LAYOUT_kn)
            coopMatLoadNV(b[j], sb, kk * B_STRIDE + bn + 16u * j, B_STRIDE, false);
#else
            coopMatLoadNV(b[j], sb, (bn + 16u * j) * A_STRIDE + kk, A_STRIDE, true);
#endif
          }
          for (uint i = 0u; i < 4u; ++i)
            for (uint j = 0u; j < 2u; ++j) acc[i][j] = coopMatMulAddNV(a[i], b[j], acc[i][j]);
        }
      }
      barrier();
    }

    if (!owner) continue;
    for (uint i = 0u; i < 4u; ++i)
      for (uint j = 0u; j < 2u; ++j) {
        const uint m0 = tile_m + bm + 16u * i, n0 = tile_n + bn + 16u * j;
        if (m0 >= M || n0 >= N) continue;
#if defined(DTYPE_f16)
        coopMatStoreNV(acc[i][j], so[blk], 0u, 16u, false);
        subgroupMemoryBarrierShared();
        for (uint e = 2u * gl_SubgroupInvocationID; e < 256u; e += 2u * gl_SubgroupSize)
          t_out[((m0 + e / 16u) * N + n0 + e % 16u) / 2u] = packHalf2x16(vec2(so[blk][e], so[blk][e + 1u]));
        subgroupMemoryBarrierShared();
#else
        coopMatStoreNV(acc[i][j], t_out, m0 * N + n0, N, false);
#endif
      }
  }
}
