// An experiment, not part of the shader library: the ceiling of subgroup-scope cooperative-matrix
// products on a device, as a matrix product without its memory traffic. Each workgroup owns a
// TM x TN tile as coopmat_exp.comp does (8 or 4 subgroups of SG_M x SG_N), loads its fragments
// once, and runs the K loop of coopMatMulAdd on them: SMEM=0 keeps them in registers (the
// multiply-add rate alone), SMEM=1 reads them from a BK-deep slice staged once in shared memory
// every 16 of K, as a staged kernel does (multiply-adds plus shared-memory fragment loads).
// The FLOPs are a real M x N x K product's, so coopmat_check's TFLOP/s column is the ceiling for
// that tile (its results are not a product: the check reports MISMATCH, which is expected).
// Build: bench/gpu/coopmat_exp/build.sh (the peak_* rows).
#version 450
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_control_flow_attributes : require

layout(local_size_x = INV, local_size_y = 1, local_size_z = 1) in;

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

const uint FM = SG_M / 16u, FN = SG_N / 16u;
const uint KV = BK / 8u, STRIDE = KV + 1u;
#if SMEM
shared uvec4 sa[TM * STRIDE];
shared uvec4 sb[TN * STRIDE];
#endif

void main() {
  const uint M = uint(p.mnk.x), N = uint(p.mnk.y), K = uint(p.mnk.z);
  const uint tiles_n = (N + TN - 1u) / TN, tiles_m = (M + TM - 1u) / TM;
  const uint wg = gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x;
  if (wg >= tiles_n * tiles_m) return;
  const uint tile_n = (wg % tiles_n) * TN, tile_m = (wg / tiles_n) * TM;
  const uint sg = gl_SubgroupID;
  const uint bm = (sg / (TN / SG_N)) * SG_M, bn = (sg % (TN / SG_N)) * SG_N;
  // Rows clamped into the matrices (small problems): the values do not matter, the reads must stay in.
  const uint kw = K / 8u;
#if SMEM
  const uint tid = gl_LocalInvocationID.x;
  for (uint i = tid; i < TM * KV; i += INV) {
    const uint r = min(tile_m + i / KV, M - 1u), c = min(i % KV, kw - 1u);
    sa[(i / KV) * STRIDE + i % KV] = t_a[r * kw + c];
  }
  for (uint i = tid; i < TN * KV; i += INV) {
    const uint r = min(tile_n + i / KV, N - 1u), c = min(i % KV, kw - 1u);
    sb[(i / KV) * STRIDE + i % KV] = t_b[r * kw + c];
  }
  barrier();
#else
  FRA a[FM];
  FRB b[FN];
  [[unroll]] for (uint i = 0u; i < FM; ++i)
    coopMatLoad(a[i], t_a, min(tile_m + bm + 16u * i, M - 16u) * kw, kw, gl_CooperativeMatrixLayoutRowMajor);
  [[unroll]] for (uint j = 0u; j < FN; ++j)
    coopMatLoad(b[j], t_b, min(tile_n + bn + 16u * j, N - 16u) * kw, kw, gl_CooperativeMatrixLayoutColumnMajor);
#endif
  ACC acc[FM][FN];
  [[unroll]] for (uint i = 0u; i < FM; ++i)
    [[unroll]] for (uint j = 0u; j < FN; ++j) acc[i][j] = ACC(0.0);
  for (uint k = 0u; k < K; k += 16u) {
#if SMEM
    const uint kk = (k % BK) / 8u;
    FRA a[FM];
    FRB b[FN];
    [[unroll]] for (uint i = 0u; i < FM; ++i)
      coopMatLoad(a[i], sa, (bm + 16u * i) * STRIDE + kk, STRIDE, gl_CooperativeMatrixLayoutRowMajor);
    [[unroll]] for (uint j = 0u; j < FN; ++j)
      coopMatLoad(b[j], sb, (bn + 16u * j) * STRIDE + kk, STRIDE, gl_CooperativeMatrixLayoutColumnMajor);
#endif
    [[unroll]] for (uint i = 0u; i < FM; ++i)
      [[unroll]] for (uint j = 0u; j < FN; ++j) acc[i][j] = coopMatMulAdd(a[i], b[j], acc[i][j]);
  }
  [[unroll]] for (uint i = 0u; i < FM; ++i)
    [[unroll]] for (uint j = 0u; j < FN; ++j) {
      const uint m0 = tile_m + bm + 16u * i, n0 = tile_n + bn + 16u * j;
      if (m0 + 16u <= M && n0 + 16u <= N)
        coopMatStore(acc[i][j], t_out, m0 * N + n0, N, gl_CooperativeMatrixLayoutRowMajor);
    }
}
