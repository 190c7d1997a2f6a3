#version 450
// fp16 x fp16 -> fp32-accumulated matrix product on cooperative matrices (16x16x16 tiles,
// subgroup scope), written with GL_NV_cooperative_matrix; codegen also derives the
// SPV_KHR_cooperative_matrix module from it (khr_from_nv).
//   matmul: out[M, N] = A[M, K] x B[K, N]             (B row-major, B_LAYOUT kn)
//   linear: out[M, N] = A[M, K] x W[N, K]^T (+ bias)  (W read column-major, B_LAYOUT nk)
// A workgroup computes a TILE_M x TILE_N output tile; each subgroup an SG_M x SG_N block of it
// ((SG_M / 16) x (SG_N / 16) accumulators), in several passes over K when the workgroup has
// fewer subgroups than blocks. Per K_STEP-wide step of K the workgroup stages the A and B tiles in
// shared memory as 16-byte words (zero past the matrix edges); the next step's words are loaded
// from memory into registers while the subgroups multiply from shared memory, and with two
// stages (when they fit in 48 KiB) one barrier per step suffices.
// Bias (linear): `bias` holds 16 rows of the f32 bias, each padded to N rounded up to 16; the
// accumulators start from it. Edge tiles leave through shared memory with bounds checks.
// Requirements (the runtime checks them): K a multiple of 8; matmul: N a multiple of 8; f16
// output: N even. Dispatch: one workgroup per output tile, numbered row-major over
// (ceil(M / TILE_M), ceil(N / TILE_N)), laid out 1-D as vkc_common.glslh does.
// Push constants: mnk = (M, N, K, has_bias).
#extension GL_NV_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_control_flow_attributes : require

layout(local_size_x = LOCAL_SIZE_X, local_size_y = LOCAL_SIZE_Y, local_size_z = LOCAL_SIZE_Z) in;

#if defined(DTYPE_f16)
// f16 outputs as 32-bit words of two halves (N is even): wide stores, no 16-bit writes.
layout(set = 0, binding = 0, std430) restrict writeonly buffer OutBuf { uint t_out[]; };
#else
layout(set = 0, binding = 0, std430) restrict writeonly buffer OutBuf { float t_out[]; };
#endif
layout(set = 0, binding = 1, std430) restrict readonly buffer ABuf { uvec4 t_a[]; };  // 8 halves each
layout(set = 0, binding = 2, std430) restrict readonly buffer BBuf { uvec4 t_b[]; };
layout(set = 0, binding = 3, std430) restrict readonly buffer BiasBuf { float t_bias[]; };

layout(push_constant) uniform Params {
  ivec4 mnk;  // (M, N, K, has_bias)
} p;

#define TM TILE_M
#define TN TILE_N
const uint BK = K_STEP;                         // K per staged step (32 or 64)
const uint THREADS = LOCAL_SIZE_X;
const uint BLOCKS = (TM / SG_M) * (TN / SG_N);  // subgroup blocks per tile
const uint FM = SG_M / 16, FN = SG_N / 16;      // accumulators per block
const uint KV = BK / 8u;                        // 16-byte words per staged row of K
const uint A_STRIDE = KV + 1u;                  // padded: 80-byte rows, conflict-free 8-row reads
const uint A_SIZE = TM * A_STRIDE;
#if defined(B_LAYOUT_kn)
const uint B_STRIDE = TN / 8u + 1u;             // B rows are k, TN halves each (padded)
const uint B_SIZE = BK * B_STRIDE;
#else
const uint B_STRIDE = A_STRIDE;                 // W rows are n, BK halves each
const uint B_SIZE = TN * B_STRIDE;
#endif
// Two stages when they fit in 48 KiB, else one (B's size bounded by the nk layout's).
#if STAGES_MAX >= 2 && 2 * (TILE_M + TILE_N) * (K_STEP / 8 + 1) * 16 <= 49152
#define STAGES 2u
#else
#define STAGES 1u
#endif
shared uvec4 sa[STAGES * A_SIZE];  // after the K loop: 64 words of scratch per block (edge tiles)
shared uvec4 sb[STAGES * B_SIZE];

const uint A_WORDS = TM * KV, B_WORDS = TN * KV;  // 16-byte words per staged tile
const uint A_PER = (A_WORDS + THREADS - 1u) / THREADS, B_PER = (B_WORDS + THREADS - 1u) / THREADS;
uvec4 ra[A_PER], rb[B_PER];

uint M, N, K, tile_m, tile_n;

// Loads the step at k0 into registers.
void fetch(uint k0) {
  const uint tid = gl_LocalInvocationID.x;
  [[unroll]] for (uint q = 0u; q < A_PER; ++q) {
    const uint i = tid + q * THREADS;
    const uint row = i / KV, col = (i % KV) * 8u;
    const uint m = tile_m + row, k = k0 + col;
    ra[q] = (i < A_WORDS && m < M && k < K) ? t_a[(m * K + k) / 8u] : uvec4(0u);
  }
  [[unroll]] for (uint q = 0u; q < B_PER; ++q) {
    const uint i = tid + q * THREADS;
#if defined(B_LAYOUT_kn)
    const uint row = i / (TN / 8u), col = (i % (TN / 8u)) * 8u;  // row: k, col: n
    const uint k = k0 + row, n = tile_n + col;
    rb[q] = (i < B_WORDS && k < K && n < N) ? t_b[(k * N + n) / 8u] : uvec4(0u);
#else
    const uint row = i / KV, col = (i % KV) * 8u;  // row: n, col: k
    const uint n = tile_n + row, k = k0 + col;
    rb[q] = (i < B_WORDS && n < N && k < K) ? t_b[(n * K + k) / 8u] : uvec4(0u);
#endif
  }
}

// Stores the registers into shared stage s.
void stash(uint s) {
  const uint tid = gl_LocalInvocationID.x;
  [[unroll]] for (uint q = 0u; q < A_PER; ++q) {
    const uint i = tid + q * THREADS;
    if (i < A_WORDS) sa[s * A_SIZE + (i / KV) * A_STRIDE + i % KV] = ra[q];
  }
  [[unroll]] for (uint q = 0u; q < B_PER; ++q) {
    const uint i = tid + q * THREADS;
#if defined(B_LAYOUT_kn)
    if (i < B_WORDS) sb[s * B_SIZE + (i / (TN / 8u)) * B_STRIDE + i % (TN / 8u)] = rb[q];
#else
    if (i < B_WORDS) sb[s * B_SIZE + (i / KV) * B_STRIDE + i % KV] = rb[q];
#endif
  }
}

void main() {
  M = uint(p.mnk.x), N = uint(p.mnk.y), K = uint(p.mnk.z);
  const uint tiles_n = (N + TN - 1u) / TN;
  const uint wg = gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x;
  if (wg >= tiles_n * ((M + TM - 1u) / TM)) return;  // the whole workgroup
  tile_n = (wg % tiles_n) * TN, tile_m = (wg / tiles_n) * TM;
  const uint steps = (K + BK - 1u) / BK;
  const uint n_pad = (N + 15u) & ~15u;

  const uint passes = (BLOCKS + gl_NumSubgroups - 1u) / gl_NumSubgroups;
  for (uint pass = 0u; pass < passes; ++pass) {
    const uint blk = gl_SubgroupID + pass * gl_NumSubgroups;
    const bool owner = blk < BLOCKS;
    const uint bm = (blk / (TN / SG_N)) * SG_M, bn = (blk % (TN / SG_N)) * SG_N;
    fcoopmatNV<32, gl_ScopeSubgroup, 16, 16> acc[FM][FN];
    [[unroll]] for (uint j = 0u; j < FN; ++j) {
      fcoopmatNV<32, gl_ScopeSubgroup, 16, 16> start = fcoopmatNV<32, gl_ScopeSubgroup, 16, 16>(0.0);
      if (p.mnk.w != 0 && owner) coopMatLoadNV(start, t_bias, min(tile_n + bn + 16u * j, n_pad - 16u), n_pad, false);
      [[unroll]] for (uint i = 0u; i < FM; ++i) acc[i][j] = start;
    }

    if (pass > 0u) barrier();  // the previous pass's readers are done with stage 0
    fetch(0u);
    stash(0u);
    barrier();
    for (uint t = 0u; t < steps; ++t) {
      const uint s = STAGES == 2u ? (t & 1u) : 0u;
      const bool more = t + 1u < steps;
      if (more) fetch((t + 1u) * BK);
      if (owner) {
        [[unroll]] for (uint kk = 0u; kk < BK / 8u; kk += 2u) {  // 16 halves of K at a time
          fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> a[FM];
          fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> b[FN];
          [[unroll]] for (uint i = 0u; i < FM; ++i) coopMatLoadNV(a[i], sa, s * A_SIZE + (bm + 16u * i) * A_STRIDE + kk, A_STRIDE, false);
          [[unroll]] for (uint j = 0u; j < FN; ++j) {
#if defined(B_LAYOUT_kn)
            coopMatLoadNV(b[j], sb, s * B_SIZE + (kk * 8u) * B_STRIDE + (bn + 16u * j) / 8u, B_STRIDE, false);
#else
            coopMatLoadNV(b[j], sb, s * B_SIZE + (bn + 16u * j) * B_STRIDE + kk, B_STRIDE, true);
#endif
          }
          [[unroll]] for (uint i = 0u; i < FM; ++i)
            [[unroll]] for (uint j = 0u; j < FN; ++j) acc[i][j] = coopMatMulAddNV(a[i], b[j], acc[i][j]);
        }
      }
      if (STAGES == 2u) {
        if (more) stash(s ^ 1u);
        barrier();
      } else {
        barrier();
        if (more) {
          stash(0u);
          barrier();
        }
      }
    }

    if (!owner) continue;
    [[unroll]] for (uint i = 0u; i < FM; ++i)
      [[unroll]] for (uint j = 0u; j < FN; ++j) {
        const uint m0 = tile_m + bm + 16u * i, n0 = tile_n + bn + 16u * j;
        if (m0 >= M || n0 >= N) continue;
        if (m0 + 16u <= M && n0 + 16u <= N) {
#if defined(DTYPE_f16)
          fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> h = fcoopmatNV<16, gl_ScopeSubgroup, 16, 16>(acc[i][j]);
          coopMatStoreNV(h, t_out, (m0 * N + n0) / 2u, N / 2u, false);
#else
          coopMatStoreNV(acc[i][j], t_out, m0 * N + n0, N, false);
#endif
          continue;
        }
        // An edge tile: through shared memory (the stages are free after the K loop's last
        // barrier), element by element (pairs for f16).
        const uint base = blk * 64u;
        coopMatStoreNV(acc[i][j], sa, base, 4u, false);
        subgroupMemoryBarrierShared();
#if defined(DTYPE_f16)
        for (uint e = 2u * gl_SubgroupInvocationID; e < 256u; e += 2u * gl_SubgroupSize) {
          const uint m = m0 + e / 16u, n = n0 + e % 16u;
          const uvec4 w = sa[base + e / 4u];
          const vec2 v = uintBitsToFloat(e % 4u == 0u ? w.xy : w.zw);
          if (m < M && n < N) t_out[(m * N + n) / 2u] = packHalf2x16(v);
        }
#else
        for (uint e = gl_SubgroupInvocationID; e < 256u; e += gl_SubgroupSize) {
          const uint m = m0 + e / 16u, n = n0 + e % 16u;
          if (m < M && n < N) t_out[m * N + n] = uintBitsToFloat(sa[base + e / 4u][e % 4u]);
        }
#endif
        subgroupMemoryBarrierShared();
      }
  }
}
