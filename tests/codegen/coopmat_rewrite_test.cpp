// NV -> KHR cooperative-matrix rewrite on a small module compiled in-process: the KHR
// capability/extension/opcodes appear, A and B (one NV type) are split by Use, and the
// load/store operands are reordered into (layout, stride).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>

#include "vkc/codegen/compile.h"
#include "vkc/codegen/coopmat_rewrite.h"

namespace vkc::codegen {
namespace {

using namespace coopmat_op;

const char* kNvShader = R"(#version 450
#extension GL_NV_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_shader_16bit_storage : require
layout(local_size_x = 32) in;
layout(set = 0, binding = 0) buffer D { float d[]; };
layout(set = 0, binding = 1) readonly buffer A { float16_t a[]; };
layout(set = 0, binding = 2) readonly buffer B { float16_t b[]; };
void main() {
  fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> ma, mb;
  coopMatLoadNV(ma, a, 0, 16, false);
  coopMatLoadNV(mb, b, 0, 16, true);
  fcoopmatNV<32, gl_ScopeSubgroup, 16, 16> mc = fcoopmatNV<32, gl_ScopeSubgroup, 16, 16>(0.0);
  mc = coopMatMulAddNV(ma, mb, mc);
  coopMatStoreNV(mc, d, 0, 16, false);
}
)";

struct Inst {
  uint32_t op;
  std::vector<uint32_t> w;  // operands
};

std::vector<Inst> decode(const std::vector<uint32_t>& m) {
  std::vector<Inst> out;
  for (size_t i = 5; i < m.size(); i += m[i] >> 16) out.push_back({m[i] & 0xffff, {m.begin() + i + 1, m.begin() + i + (m[i] >> 16)}});
  return out;
}

std::vector<uint32_t> compile_nv() {
  Variant v;
  v.name = "coopmat_test";
  v.vk_minor = 3;
  v.optimize = false;
  ShaderCompiler compiler(nullptr);
  return compiler.compile(v, kNvShader, "coopmat_test.comp").spirv;
}

TEST(CoopmatRewrite, ProducesKhrOpcodesSplitTypesAndReorderedOperands) {
  const std::vector<uint32_t> nv = compile_nv();
  ASSERT_EQ(validate_spirv(nv, 3), "");
  const std::vector<uint32_t> khr = rewrite_coopmat_nv_to_khr(nv);
  EXPECT_GT(khr[3], nv[3]);  // id bound grew

  std::map<uint32_t, uint32_t> constants;  // id -> value of 32-bit OpConstants
  std::map<uint32_t, uint32_t> use_of_type;
  std::vector<std::string> extensions;
  std::vector<uint32_t> capabilities, loads_layout, muladd;
  for (const Inst& i : decode(khr)) {
    EXPECT_TRUE(i.op < kTypeNV || i.op > kLengthNV) << "NV opcode " << i.op << " left";
    if (i.op == 17) capabilities.push_back(i.w[0]);
    if (i.op == 10) extensions.emplace_back(reinterpret_cast<const char*>(i.w.data()));
    if (i.op == 43 && i.w.size() == 3) constants[i.w[1]] = i.w[2];
    if (i.op == kTypeKHR) {
      ASSERT_EQ(i.w.size(), 6u);
      use_of_type[i.w[0]] = constants.at(i.w[5]);
      EXPECT_EQ(constants.at(i.w[2]), 3u);  // Subgroup scope
    }
    if (i.op == kLoadKHR) {  // [type, result, ptr, layout, stride, memory operands]
      loads_layout.push_back(constants.at(i.w[3]));
      EXPECT_EQ(constants.at(i.w[4]), 16u);
    }
    if (i.op == kStoreKHR) {
      EXPECT_EQ(constants.at(i.w[2]), 0u);   // [ptr, obj, layout, stride]: row-major
      EXPECT_EQ(constants.at(i.w[3]), 16u);
    }
    if (i.op == kMulAddKHR) muladd = i.w;
  }
  EXPECT_THAT(capabilities, ::testing::Contains(kCapabilityKHR));
  EXPECT_THAT(capabilities, ::testing::Not(::testing::Contains(kCapabilityNV)));
  EXPECT_THAT(capabilities, ::testing::Contains(5345u));  // VulkanMemoryModel stays
  EXPECT_THAT(extensions, ::testing::Contains("SPV_KHR_cooperative_matrix"));
  EXPECT_THAT(extensions, ::testing::Not(::testing::Contains("SPV_NV_cooperative_matrix")));
  EXPECT_THAT(loads_layout, ::testing::UnorderedElementsAre(0u, 1u));  // A row-major, B column-major
  EXPECT_EQ(use_of_type.size(), 3u);  // fp16 split into A and B, fp32 accumulator
  ASSERT_EQ(muladd.size(), 5u);       // float: no operand mask
  EXPECT_EQ(use_of_type.at(muladd[0]), 2u);
  // Rewriting is deterministic.
  EXPECT_EQ(rewrite_coopmat_nv_to_khr(nv), khr);
}

TEST(CoopmatRewrite, RejectsModulesWithoutNvCoopmat) {
  const std::vector<uint32_t> words = {0x07230203, 0x00010600, 0, 10, 0, (2u << 16) | 17, 1};
  EXPECT_THROW(rewrite_coopmat_nv_to_khr(words), CoopmatRewriteError);
}

}  // namespace
}  // namespace vkc::codegen
