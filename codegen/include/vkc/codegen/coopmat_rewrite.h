// SPV_NV_cooperative_matrix -> SPV_KHR_cooperative_matrix, on the binary module.
//
// Debian bookworm's glslang has no GL_KHR_cooperative_matrix, so KHR variants are made
// from the NV modules glslang does compile. The transformation (docs/shader-specs.md,
// "Cooperative matrix: NV to KHR"):
//   1. Capability CooperativeMatrixNV -> CooperativeMatrixKHR; the extension string
//      "SPV_NV_cooperative_matrix" -> "SPV_KHR_cooperative_matrix" (same length).
//   2. Every NV matrix value gets a Use (MatrixA, MatrixB, Accumulator): seeded from the
//      MulAdd operands (A, B, C and result) and propagated through loads and stores of
//      Function/Private variables, access chains, copies, phis, selects, element-wise
//      arithmetic and conversions (union-find). Unseeded values are accumulators.
//      A value needed in two roles is an error (core KHR cannot convert between Uses).
//   3. Each NV matrix type becomes one OpTypeCooperativeMatrixKHR per Use it is needed
//      in (glslang emits A and B as one NV type, so it is split); pointer and array types
//      built on it are cloned per Use; results are retyped.
//   4. Load/Store: NV (stride, column-major bool) -> KHR (layout uint, stride);
//      MulAdd gets the signedness operand mask for integer components; Length is retyped.
// Function calls and structs carrying matrices are rejected (vkc's shaders have none).
#pragma once

#include <cstdint>
#include <span>
#include <stdexcept>
#include <vector>

namespace vkc::codegen {

class CoopmatRewriteError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Rewrites an NV cooperative-matrix module into its KHR form. Throws CoopmatRewriteError.
std::vector<uint32_t> rewrite_coopmat_nv_to_khr(std::span<const uint32_t> nv_module);

/// SPIR-V opcodes involved (the installed spirv headers predate the KHR ones).
namespace coopmat_op {
inline constexpr uint32_t kTypeNV = 5358, kLoadNV = 5359, kStoreNV = 5360, kMulAddNV = 5361, kLengthNV = 5362;
inline constexpr uint32_t kTypeKHR = 4456, kLoadKHR = 4457, kStoreKHR = 4458, kMulAddKHR = 4459, kLengthKHR = 4460;
inline constexpr uint32_t kCapabilityNV = 5357, kCapabilityKHR = 6022;
}  // namespace coopmat_op

}  // namespace vkc::codegen
