// An experiment, not part of the shader library: an fp16 x fp16 -> fp32 matrix product on
// workgroup-scope cooperative matrices with VK_NV_cooperative_matrix2's tensor addressing
// (coopMatLoadTensorNV: edges clamped to zero, stores clipped, the linear weight W[N, K] read
// through a transposing tensor view, the bias through a layout of stride 0). It needs
// GL_NV_cooperative_matrix2, which Debian's glslang lacks (glslang 15 or later has it), so it is
// compiled by hand and run by coopmat_check's --spv option (bench/README.md):
//   glslang --target-env vulkan1.3 -V -DTM=128 -DTN=128 -DKS=32 -DINV=128 -DKN=0 \
//       bench/gpu/coopmat2_tensor.comp -o t_128x128_k32_i128_kn0.spv
// TM x TN outputs per workgroup of INV invocations, KS deep per step; KN=1: B is [K, N].
// Bindings and push constants as shader-specs/matmul_coopmat.glsl (bias: its first row).
// On the H200 it reached 80-151 TFLOP/s at 4096^3, against 242 for linear_coopmat.
#version 450 core
#extension GL_KHR_memory_scope_semantics : enable
#extension GL_KHR_cooperative_matrix : enable
#extension GL_EXT_shader_explicit_arithmetic_types : enable
#extension GL_NV_cooperative_matrix2 : enable
#extension GL_EXT_control_flow_attributes : enable
layout(local_size_x = INV, local_size_y = 1, local_size_z = 1) in;
layout(set = 0, binding = 0, std430) writeonly buffer O { float o[]; };
layout(set = 0, binding = 1, std430) readonly buffer A { float16_t a[]; };
layout(set = 0, binding = 2, std430) readonly buffer B { float16_t b[]; };
layout(set = 0, binding = 3, std430) readonly buffer Bias { float bias[]; };
layout(push_constant) uniform P { ivec4 mnk; } p;
const uint BM = TM, BN = TN, BK = KS;
void main() {
  const uint M = uint(p.mnk.x), N = uint(p.mnk.y), K = uint(p.mnk.z);
  const uint tiles_n = (N + BN - 1u) / BN;
  const uint wg = gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x;
  if (wg >= tiles_n * ((M + BM - 1u) / BM)) return;
  const uint tile_n = (wg % tiles_n) * BN, tile_m = (wg / tiles_n) * BM;
  tensorLayoutNV<2, gl_CooperativeMatrixClampModeConstantNV> tA = createTensorLayoutNV(2, gl_CooperativeMatrixClampModeConstantNV);
  tA = setTensorLayoutDimensionNV(tA, M, K);
  tensorLayoutNV<2, gl_CooperativeMatrixClampModeConstantNV> tB = createTensorLayoutNV(2, gl_CooperativeMatrixClampModeConstantNV);
#if KN
  tB = setTensorLayoutDimensionNV(tB, K, N);
#else
  tB = setTensorLayoutDimensionNV(tB, N, K);
  tensorViewNV<2, false, 1, 0> vT = createTensorViewNV(2, false, 1, 0);
#endif
  tensorLayoutNV<2, gl_CooperativeMatrixClampModeConstantNV> tO = createTensorLayoutNV(2, gl_CooperativeMatrixClampModeConstantNV);
  tO = setTensorLayoutDimensionNV(tO, M, N);
  coopmat<float, gl_ScopeWorkgroup, BM, BN, gl_MatrixUseAccumulator> acc = coopmat<float, gl_ScopeWorkgroup, BM, BN, gl_MatrixUseAccumulator>(0.0);
#if !KN
  if (p.mnk.w != 0) {
    tensorLayoutNV<2, gl_CooperativeMatrixClampModeConstantNV> tb = createTensorLayoutNV(2, gl_CooperativeMatrixClampModeConstantNV);
    tb = setTensorLayoutDimensionNV(tb, BM, N);
    tb = setTensorLayoutStrideNV(tb, 0, 1);
    coopMatLoadTensorNV(acc, bias, 0, sliceTensorLayoutNV(tb, 0, BM, tile_n, BN));
  }
#endif
  for (uint k = 0u; k < K; k += BK) {
    coopmat<float16_t, gl_ScopeWorkgroup, BM, BK, gl_MatrixUseA> ma;
    coopmat<float16_t, gl_ScopeWorkgroup, BK, BN, gl_MatrixUseB> mb;
    coopMatLoadTensorNV(ma, a, 0, sliceTensorLayoutNV(tA, tile_m, BM, k, BK));
#if KN
    coopMatLoadTensorNV(mb, b, 0, sliceTensorLayoutNV(tB, k, BK, tile_n, BN));
#else
    coopMatLoadTensorNV(mb, b, 0, sliceTensorLayoutNV(tB, tile_n, BN, k, BK), vT);
#endif
    acc = coopMatMulAdd(ma, mb, acc);
  }
  coopMatStoreTensorNV(acc, o, 0, sliceTensorLayoutNV(tO, tile_m, BM, tile_n, BN));
}
