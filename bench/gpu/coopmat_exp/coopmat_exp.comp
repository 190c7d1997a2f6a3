// An experiment, not part of the shader library: shader-specs/matmul_coopmat.glsl's linear
// kernel (B_LAYOUT nk: out[M, N] = A[M, K] x W[N, K]^T + bias, fp16 inputs, fp32 accumulation
// and f32 outputs) written directly with GL_KHR_cooperative_matrix at subgroup scope, with
// switches for the schedule. Same bindings, push constants, dispatch (one workgroup per
// TM x TN tile, 1-D as vkc_common.glslh) and edge handling as the library's kernel, so
// coopmat_check runs and checks it with `--spv s_<TM>x<TN>_k<BK>_i<INV>_kn0_<tag>.spv`.
// Needs glslang 14 or later (Debian's lacks GL_KHR_cooperative_matrix); build.sh here builds
// every variant (bench/README.md, "Cooperative-matrix matmul on an NVIDIA H200").
// Parameters (-D):
//   TM, TN     workgroup tile; SG_M, SG_N: one subgroup's block (one block per subgroup:
//              INV / 32 == (TM / SG_M) * (TN / SG_N))
//   BK         K per staged step (a multiple of 16); INV: invocations
//   STAGES     shared stages (1: two barriers per step; 2: a ring of two, one barrier per step)
//   RSETS      register sets for the global words (1: step t+1 is loaded while step t is
//              multiplied; 2: step t+2 is, so each load has two steps to arrive before it is
//              written to shared memory)
//   FRAG_DB    1: the fragments for the next 16 of K are read from shared memory before the
//              current ones are multiplied (inside a step)
//   GROUP_M    0: tiles row-major; G: groups of G tile rows walked column by column (L2 reuse)
//   DIRECT     1 (with STAGES 2, RSETS 1): each step's words are copied straight from the buffers
//              into the free stage at the top of the step, no register set in between (a copy
//              the driver may make asynchronous), then the current stage is multiplied
//   ACC16      1: fp16 accumulators (half the registers of fp32 ones; outputs still f32)
// Shared rows are BK / 8 + 1 16-byte words (odd: conflict-free 8-row fragment reads).
#version 450
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_control_flow_attributes : require

#ifndef STAGES
#define STAGES 1
#endif
#ifndef RSETS
#define RSETS 1
#endif
#ifndef FRAG_DB
#define FRAG_DB 0
#endif
#ifndef GROUP_M
#define GROUP_M 0
#endif
#ifndef DIRECT
#define DIRECT 0
#endif
#ifndef ACC16
#define ACC16 0
#endif
#if DIRECT && (STAGES != 2 || RSETS != 1)
#error DIRECT needs STAGES 2 and RSETS 1
#endif
#ifndef NO_MMA
#define NO_MMA 0  // 1: staging alone (global loads, shared stores, barriers; the products left out)
#endif
#ifndef LOADS_ONLY
#define LOADS_ONLY 0  // 1: the global loads alone (folded into one word, no shared stores, no barriers)
#endif
#if LOADS_ONLY && !NO_MMA
#error LOADS_ONLY needs NO_MMA
#endif
#if (BK % 16) != 0
#error BK must be a multiple of 16
#endif
#if (TM / SG_M) * (TN / SG_N) * 32 != INV
#error one subgroup block per subgroup of 32: INV must be 32 * (TM / SG_M) * (TN / SG_N)
#endif
#if STAGES * (TM + TN) * (BK / 8 + 1) * 16 > 49152
#error the stages exceed 48 KiB of shared memory
#endif
#if (TM / SG_M) * (TN / SG_N) * 64 > STAGES * TM * (BK / 8 + 1)
#error the edge scratch (64 words per subgroup) does not fit in sa
#endif
#if RSETS < 1 || RSETS > 2 || STAGES < 1 || STAGES > 2
#error STAGES and RSETS are 1 or 2
#endif

layout(local_size_x = INV, local_size_y = 1, local_size_z = 1) in;

layout(set = 0, binding = 0, std430) restrict writeonly buffer OutBuf { float t_out[]; };
layout(set = 0, binding = 1, std430) restrict readonly buffer ABuf { uvec4 t_a[]; };  // 8 halves each
layout(set = 0, binding = 2, std430) restrict readonly buffer BBuf { uvec4 t_b[]; };  // W[N, K]
layout(set = 0, binding = 3, std430) restrict readonly buffer BiasBuf { float t_bias[]; };

layout(push_constant) uniform Params {
  ivec4 mnk;  // (M, N, K, has_bias)
} p;

#define ACCF coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>
#if ACC16
#define ACC coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>
#else
#define ACC ACCF
#endif
#define FRA coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA>
#define FRB coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB>

const uint THREADS = INV;
const uint FM = SG_M / 16, FN = SG_N / 16;  // accumulators per block
const uint KV = BK / 8u;                    // 16-byte words per staged row of K
const uint STRIDE = KV + 1u;                // padded row (odd number of words)
const uint A_SIZE = TM * STRIDE, B_SIZE = TN * STRIDE;
shared uvec4 sa[STAGES * A_SIZE];  // after the K loop: 64 words of scratch per subgroup (edge tiles)
shared uvec4 sb[STAGES * B_SIZE];

const uint A_WORDS = TM * KV, B_WORDS = TN * KV;  // 16-byte words per staged tile
const uint A_PER = (A_WORDS + THREADS - 1u) / THREADS, B_PER = (B_WORDS + THREADS - 1u) / THREADS;
uvec4 ra0[A_PER], rb0[B_PER];
#if RSETS == 2
uvec4 ra1[A_PER], rb1[B_PER];
#endif

uint M, N, K, tile_m, tile_n;
uvec4 sink = uvec4(0u);  // LOADS_ONLY: every loaded word is folded in, so no load is dropped

// fetchX(k0): loads the step at k0 into register set X (zero past the edges);
// stashX(s): stores register set X into shared stage s.
#define DEFINE_SET(RA, RB, FETCH, STASH)                                                     \
  void FETCH(uint k0) {                                                                      \
    const uint tid = gl_LocalInvocationID.x;                                                 \
    [[unroll]] for (uint q = 0u; q < A_PER; ++q) {                                           \
      const uint i = tid + q * THREADS;                                                      \
      const uint row = i / KV, col = (i % KV) * 8u;                                          \
      const uint m = tile_m + row, k = k0 + col;                                             \
      RA[q] = (i < A_WORDS && m < M && k < K) ? t_a[(m * K + k) / 8u] : uvec4(0u);           \
    }                                                                                        \
    [[unroll]] for (uint q = 0u; q < B_PER; ++q) {                                           \
      const uint i = tid + q * THREADS;                                                      \
      const uint row = i / KV, col = (i % KV) * 8u; /* row: n, col: k */                     \
      const uint n = tile_n + row, k = k0 + col;                                             \
      RB[q] = (i < B_WORDS && n < N && k < K) ? t_b[(n * K + k) / 8u] : uvec4(0u);           \
    }                                                                                        \
  }                                                                                          \
  void STASH(uint s) {                                                                       \
    const uint tid = gl_LocalInvocationID.x;                                                 \
    if (LOADS_ONLY != 0) {                                                                   \
      [[unroll]] for (uint q = 0u; q < A_PER; ++q) sink ^= RA[q];                            \
      [[unroll]] for (uint q = 0u; q < B_PER; ++q) sink ^= RB[q];                            \
      return;                                                                                \
    }                                                                                        \
    [[unroll]] for (uint q = 0u; q < A_PER; ++q) {                                           \
      const uint i = tid + q * THREADS;                                                      \
      if (i < A_WORDS) sa[s * A_SIZE + (i / KV) * STRIDE + i % KV] = RA[q];                  \
    }                                                                                        \
    [[unroll]] for (uint q = 0u; q < B_PER; ++q) {                                           \
      const uint i = tid + q * THREADS;                                                      \
      if (i < B_WORDS) sb[s * B_SIZE + (i / KV) * STRIDE + i % KV] = RB[q];                  \
    }                                                                                        \
  }

DEFINE_SET(ra0, rb0, fetch0, stash0)

// DIRECT: the step at k0 copied from the buffers into stage s (zero past the edges).
void copy_step(uint k0, uint s) {
  const uint tid = gl_LocalInvocationID.x;
  [[unroll]] for (uint q = 0u; q < A_PER; ++q) {
    const uint i = tid + q * THREADS;
    const uint row = i / KV, col = (i % KV) * 8u;
    const uint m = tile_m + row, k = k0 + col;
    if (i < A_WORDS) sa[s * A_SIZE + row * STRIDE + i % KV] = (m < M && k < K) ? t_a[(m * K + k) / 8u] : uvec4(0u);
  }
  [[unroll]] for (uint q = 0u; q < B_PER; ++q) {
    const uint i = tid + q * THREADS;
    const uint row = i / KV, col = (i % KV) * 8u;
    const uint n = tile_n + row, k = k0 + col;
    if (i < B_WORDS) sb[s * B_SIZE + row * STRIDE + i % KV] = (n < N && k < K) ? t_b[(n * K + k) / 8u] : uvec4(0u);
  }
}
#if RSETS == 2
DEFINE_SET(ra1, rb1, fetch1, stash1)
#endif

// Set x's fetch / stash, x a constant once the step loop is unrolled (no dynamic indexing of
// the register arrays in any case).
void fetch_set(uint x, uint k0) {
#if RSETS == 2
  if (x != 0u) {
    fetch1(k0);
    return;
  }
#endif
  fetch0(k0);
}
void stash_set(uint x, uint s) {
#if RSETS == 2
  if (x != 0u) {
    stash1(s);
    return;
  }
#endif
  stash0(s);
}

void main() {
  M = uint(p.mnk.x), N = uint(p.mnk.y), K = uint(p.mnk.z);
  const uint tiles_n = (N + TN - 1u) / TN, tiles_m = (M + TM - 1u) / TM;
  const uint wg = gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x;
  if (wg >= tiles_n * tiles_m) return;  // the whole workgroup
#if GROUP_M > 0
  {
    const uint per_group = uint(GROUP_M) * tiles_n;  // workgroups per group of GROUP_M tile rows
    const uint first = (wg / per_group) * uint(GROUP_M);
    const uint rows = min(tiles_m - first, uint(GROUP_M));  // the last group may be shorter
    const uint r = wg % per_group;
    tile_m = (first + r % rows) * TM, tile_n = (r / rows) * TN;
  }
#else
  tile_n = (wg % tiles_n) * TN, tile_m = (wg / tiles_n) * TM;
#endif
  const uint steps = (K + BK - 1u) / BK;
  const uint n_pad = (N + 15u) & ~15u;

  const uint blk = gl_SubgroupID;  // one block per subgroup
  const uint bm = (blk / (TN / SG_N)) * SG_M, bn = (blk % (TN / SG_N)) * SG_N;
  ACC acc[FM][FN];
  [[unroll]] for (uint j = 0u; j < FN; ++j) {
    ACCF start = ACCF(0.0);
    if (p.mnk.w != 0)
      coopMatLoad(start, t_bias, min(tile_n + bn + 16u * j, n_pad - 16u), n_pad, gl_CooperativeMatrixLayoutRowMajor);
    [[unroll]] for (uint i = 0u; i < FM; ++i) acc[i][j] = ACC(start);
  }

#if DIRECT
  copy_step(0u, 0u);
  barrier();
  for (uint t = 0u; t < steps; ++t) {
    const uint s = t & 1u;
    if (t + 1u < steps) copy_step((t + 1u) * BK, s ^ 1u);
    [[unroll]] for (uint kk = 0u; kk < KV; kk += 2u) {
      FRA a[FM];
      FRB b[FN];
      [[unroll]] for (uint i = 0u; i < FM; ++i)
        coopMatLoad(a[i], sa, s * A_SIZE + (bm + 16u * i) * STRIDE + kk, STRIDE, gl_CooperativeMatrixLayoutRowMajor);
      [[unroll]] for (uint j = 0u; j < FN; ++j)
        coopMatLoad(b[j], sb, s * B_SIZE + (bn + 16u * j) * STRIDE + kk, STRIDE, gl_CooperativeMatrixLayoutColumnMajor);
      [[unroll]] for (uint i = 0u; i < FM; ++i)
        [[unroll]] for (uint j = 0u; j < FN; ++j) acc[i][j] = coopMatMulAdd(a[i], b[j], acc[i][j]);
    }
    barrier();
  }
#else
  // Prologue: steps 0 .. RSETS-1 in flight, step 0 in stage 0.
  fetch0(0u);
#if RSETS == 2
  if (steps > 1u) fetch1(BK);
#endif
  stash0(0u);
  if (LOADS_ONLY == 0) barrier();
  // At step t: stage t % STAGES holds step t; register set (t + 1) % RSETS holds step t + 1
  // (loaded), set t % RSETS is free and takes step t + RSETS. The step loop is unrolled by
  // RSETS so that the set numbers are constants.
  for (uint t0 = 0u; t0 < steps; t0 += RSETS) {
    [[unroll]] for (uint h = 0u; h < RSETS; ++h) {
      const uint t = t0 + h;
      if (t < steps) {  // uniform across the workgroup: barriers below are fine
        const uint s = STAGES == 2 ? (t & 1u) : 0u;
        const bool more = t + 1u < steps;
        if (t + RSETS < steps) fetch_set(h, (t + RSETS) * BK);
#if FRAG_DB
        FRA fa[2][FM];
        FRB fb[2][FN];
        [[unroll]] for (uint i = 0u; i < FM; ++i)
          coopMatLoad(fa[0][i], sa, s * A_SIZE + (bm + 16u * i) * STRIDE, STRIDE, gl_CooperativeMatrixLayoutRowMajor);
        [[unroll]] for (uint j = 0u; j < FN; ++j)
          coopMatLoad(fb[0][j], sb, s * B_SIZE + (bn + 16u * j) * STRIDE, STRIDE, gl_CooperativeMatrixLayoutColumnMajor);
        [[unroll]] for (uint q = 0u; q < KV / 2u; ++q) {  // 16 halves of K at a time
          const uint c = q & 1u;
          if (q + 1u < KV / 2u) {
            const uint kk = 2u * (q + 1u);
            [[unroll]] for (uint i = 0u; i < FM; ++i)
              coopMatLoad(fa[c ^ 1u][i], sa, s * A_SIZE + (bm + 16u * i) * STRIDE + kk, STRIDE, gl_CooperativeMatrixLayoutRowMajor);
            [[unroll]] for (uint j = 0u; j < FN; ++j)
              coopMatLoad(fb[c ^ 1u][j], sb, s * B_SIZE + (bn + 16u * j) * STRIDE + kk, STRIDE, gl_CooperativeMatrixLayoutColumnMajor);
          }
#if !NO_MMA
          [[unroll]] for (uint i = 0u; i < FM; ++i)
            [[unroll]] for (uint j = 0u; j < FN; ++j) acc[i][j] = coopMatMulAdd(fa[c][i], fb[c][j], acc[i][j]);
#endif
        }
#else
        [[unroll]] for (uint kk = 0u; kk < KV; kk += 2u) {  // 16 halves of K at a time
          FRA a[FM];
          FRB b[FN];
          [[unroll]] for (uint i = 0u; i < FM; ++i)
            coopMatLoad(a[i], sa, s * A_SIZE + (bm + 16u * i) * STRIDE + kk, STRIDE, gl_CooperativeMatrixLayoutRowMajor);
          [[unroll]] for (uint j = 0u; j < FN; ++j)
            coopMatLoad(b[j], sb, s * B_SIZE + (bn + 16u * j) * STRIDE + kk, STRIDE, gl_CooperativeMatrixLayoutColumnMajor);
#if !NO_MMA
          [[unroll]] for (uint i = 0u; i < FM; ++i)
            [[unroll]] for (uint j = 0u; j < FN; ++j) acc[i][j] = coopMatMulAdd(a[i], b[j], acc[i][j]);
#endif
        }
#endif
        // Step t + 1 (in set (h + 1) % RSETS) into the other stage, or into the only one once
        // everyone is done reading it.
#if STAGES == 2
        if (more) stash_set((h + 1u) % RSETS, s ^ 1u);
        barrier();
#else
        if (LOADS_ONLY == 0) barrier();
        if (more) {
          stash_set((h + 1u) % RSETS, 0u);
          if (LOADS_ONLY == 0) barrier();
        }
#endif
      }
    }
  }

#endif
  if (LOADS_ONLY != 0) {  // one word out if the fold hits an unlikely value: the loads stay live
    if (sink == uvec4(0x9e3779b9u, 0x7f4a7c15u, 0x2545f491u, 0x4f6cdd1du)) t_out[tile_m] = 1.0;
    return;
  }
  // The K loop ended on a barrier: the stages are free for the edge tiles' scratch.
  [[unroll]] for (uint i = 0u; i < FM; ++i)
    [[unroll]] for (uint j = 0u; j < FN; ++j) {
      const uint m0 = tile_m + bm + 16u * i, n0 = tile_n + bn + 16u * j;
      if (m0 >= M || n0 >= N) continue;
      const ACCF res = ACCF(acc[i][j]);
      if (m0 + 16u <= M && n0 + 16u <= N) {
        coopMatStore(res, t_out, m0 * N + n0, N, gl_CooperativeMatrixLayoutRowMajor);
        continue;
      }
      // An edge tile: through shared memory, element by element.
      const uint base = blk * 64u;
      coopMatStore(res, sa, base, 4u, gl_CooperativeMatrixLayoutRowMajor);
      subgroupMemoryBarrierShared();
      for (uint e = gl_SubgroupInvocationID; e < 256u; e += gl_SubgroupSize) {
        const uint m = m0 + e / 16u, n = n0 + e % 16u;
        if (m < M && n < N) t_out[m * N + n] = uintBitsToFloat(sa[base + e / 4u][e % 4u]);
      }
      subgroupMemoryBarrierShared();
    }
}
