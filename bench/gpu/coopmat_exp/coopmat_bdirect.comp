// An experiment, not part of the shader library: linear_coopmat's schedule (128 x 256 tile, 8
// subgroups of 64 x 64, A staged in shared memory through registers, the next step's words
// loaded while the current one is multiplied) with B = W[N, K] not staged at all: each subgroup
// reads its B fragments straight from the buffer (column-major 16 x 16 fragments of rows of W,
// 32 contiguous bytes each), so shared memory carries a third of linear_coopmat's traffic.
// Full tiles only (rows are clamped into the matrices, so edge sizes read valid memory but give
// wrong values: coopmat_check's small problems report MISMATCH; 4096^3 is checked).
// Parameters: BK (K per staged step, a multiple of 16); ADIRECT=1 reads A's fragments from the
// buffer too (no shared memory, no barriers; the 4 subgroups of a row share them through L1).
#version 450
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_control_flow_attributes : require

layout(local_size_x = 256, local_size_y = 1, local_size_z = 1) in;

layout(set = 0, binding = 0, std430) restrict writeonly buffer OutBuf { float t_out[]; };
layout(set = 0, binding = 1, std430) restrict readonly buffer ABuf { uvec4 t_a[]; };
layout(set = 0, binding = 2, std430) restrict readonly buffer BBuf { uvec4 t_b[]; };
layout(set = 0, binding = 3, std430) restrict readonly buffer BiasBuf { float t_bias[]; };

layout(push_constant) uniform Params {
  ivec4 mnk;
} p;

#define ACC coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>
#define FRA coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA>
#define FRB coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB>

const uint TM = 128u, TN = 256u, FM = 4u, FN = 4u;
#ifndef ADIRECT
#define ADIRECT 0
#endif
const uint KV = BK / 8u, STRIDE = KV + 1u;
const uint A_WORDS = TM * KV, A_PER = (A_WORDS + 255u) / 256u;
#if !ADIRECT
shared uvec4 sa[TM * STRIDE];
uvec4 ra[A_PER];
#endif

void main() {
  const uint M = uint(p.mnk.x), N = uint(p.mnk.y), K = uint(p.mnk.z), kw = K / 8u;
  const uint tiles_n = (N + TN - 1u) / TN, tiles_m = (M + TM - 1u) / TM;
  const uint wg = gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x;
  if (wg >= tiles_n * tiles_m) return;
  const uint tile_n = (wg % tiles_n) * TN, tile_m = (wg / tiles_n) * TM;
  const uint sg = gl_SubgroupID, tid = gl_LocalInvocationID.x;
  const uint bm = (sg / 4u) * 64u, bn = (sg % 4u) * 64u;
  const uint n_pad = (N + 15u) & ~15u;
  ACC acc[FM][FN];
  [[unroll]] for (uint j = 0u; j < FN; ++j) {
    ACC start = ACC(0.0);
    if (p.mnk.w != 0)
      coopMatLoad(start, t_bias, min(tile_n + bn + 16u * j, n_pad - 16u), n_pad, gl_CooperativeMatrixLayoutRowMajor);
    [[unroll]] for (uint i = 0u; i < FM; ++i) acc[i][j] = start;
  }
  uint brow[FN];
  [[unroll]] for (uint j = 0u; j < FN; ++j) brow[j] = min(tile_n + bn + 16u * j, N - 16u) * kw;
  uint arow[FM];
  [[unroll]] for (uint i = 0u; i < FM; ++i) arow[i] = min(tile_m + bm + 16u * i, M - 16u) * kw;
#if !ADIRECT
  // Step 0's A words.
  [[unroll]] for (uint q = 0u; q < A_PER; ++q) {
    const uint i = tid + q * 256u;
    ra[q] = t_a[min(tile_m + i / KV, M - 1u) * kw + min(i % KV, kw - 1u)];
  }
#endif
  for (uint k0 = 0u; k0 < K; k0 += BK) {
#if !ADIRECT
    barrier();  // the previous step's fragment reads are done
    [[unroll]] for (uint q = 0u; q < A_PER; ++q) {
      const uint i = tid + q * 256u;
      if (i < A_WORDS) sa[(i / KV) * STRIDE + i % KV] = ra[q];
    }
    barrier();
    if (k0 + BK < K) {
      const uint kn = (k0 + BK) / 8u;
      [[unroll]] for (uint q = 0u; q < A_PER; ++q) {
        const uint i = tid + q * 256u;
        ra[q] = t_a[min(tile_m + i / KV, M - 1u) * kw + min(kn + i % KV, kw - 1u)];
      }
    }
#endif
    [[unroll]] for (uint kk = 0u; kk < KV; kk += 2u) {
      const uint kb = min(k0 / 8u + kk, kw - 2u);
      FRB b[FN];
      [[unroll]] for (uint j = 0u; j < FN; ++j)
        coopMatLoad(b[j], t_b, brow[j] + kb, kw, gl_CooperativeMatrixLayoutColumnMajor);
      FRA a[FM];
#if ADIRECT
      [[unroll]] for (uint i = 0u; i < FM; ++i)
        coopMatLoad(a[i], t_a, arow[i] + kb, kw, gl_CooperativeMatrixLayoutRowMajor);
#else
      [[unroll]] for (uint i = 0u; i < FM; ++i)
        coopMatLoad(a[i], sa, (bm + 16u * i) * STRIDE + kk, STRIDE, gl_CooperativeMatrixLayoutRowMajor);
#endif
      [[unroll]] for (uint i = 0u; i < FM; ++i)
        [[unroll]] for (uint j = 0u; j < FN; ++j) acc[i][j] = coopMatMulAdd(a[i], b[j], acc[i][j]);
    }
  }
  [[unroll]] for (uint i = 0u; i < FM; ++i)
    [[unroll]] for (uint j = 0u; j < FN; ++j) {
      const uint m0 = tile_m + bm + 16u * i, n0 = tile_n + bn + 16u * j;
      if (m0 + 16u <= M && n0 + 16u <= N)
        coopMatStore(acc[i][j], t_out, m0 * N + n0, N, gl_CooperativeMatrixLayoutRowMajor);
    }
}
