// Spec parsing and variant expansion: names, overrides, ranges, defaults, and one-line
// errors with file:line for bad specs.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/error_of.h"
#include "vkc/codegen/spec.h"

namespace vkc::codegen {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::UnorderedElementsAre;

std::vector<std::string> names(const ShaderSpec& s) {
  std::vector<std::string> out;
  for (const Variant& v : expand_variants(s)) out.push_back(v.name);
  return out;
}

std::string error_of(const std::string& yaml) {
  return vkc::testing::error_of<SpecError>([&] { parse_spec(yaml, "specs/bad.yaml"); });
}

TEST(Spec, ExpandsForallWithOverridesAndSuffixes) {
  const ShaderSpec s = parse_spec(R"yaml(
unary:
  parameter_names_with_default_values: {DTYPE: f32, STORAGE: buffer, OPERATOR: X}
  generate_variant_forall:
    DTYPE: [{VALUE: f32}, {VALUE: f16, SUFFIX: half}]
    STORAGE: [buffer, texture3d]
  shader_variants:
    - {NAME: relu, OPS: [aten.relu.default], OPERATOR: "max(X, 0.0)"}
    - {NAME: abs16, DTYPE: f16, OPERATOR: "abs(X)"}
  bindings:
    - {name: out, type: tensor, access: write}
    - {name: in, type: tensor}
  push_constants:
    - {name: range, type: ivec4}
    - {name: a, type: float}
)yaml",
                                  "specs/unary.yaml");
  EXPECT_EQ(s.template_path, "specs/unary.glsl");
  EXPECT_THAT(names(s), ElementsAre("abs16_buffer", "abs16_texture3d", "relu_f32_buffer", "relu_f32_texture3d",
                                    "relu_half_buffer", "relu_half_texture3d"));
  const auto vs = expand_variants(s);
  const Variant& relu = vs[4];
  EXPECT_EQ(*relu.param("OPERATOR"), "max(X, 0.0)");
  EXPECT_EQ(relu.dtype, "f16");
  EXPECT_EQ(relu.vk_minor, 1);  // default VK_VERSION
  EXPECT_THAT(relu.ops, ElementsAre("aten.relu.default"));
  EXPECT_EQ(relu.bindings[0].type, DescriptorType::StorageBuffer);
  EXPECT_EQ(vs[5].bindings[1].type, DescriptorType::StorageImage);
  EXPECT_EQ(relu.push_constant_bytes, 20u);
  EXPECT_EQ(relu.push_constants[1].offset, 16u);
  EXPECT_THAT(vs[5].layouts, ElementsAre("width_packed", "height_packed", "channels_packed"));
}

TEST(Spec, RangesVariantForallVersionAndKhrTwins) {
  const ShaderSpec s = parse_spec(R"yaml(
mm:
  parameter_names_with_default_values: {TILE: "1", COOPMAT: nv, VK_VERSION: "1.3", OPTIMIZE: "false"}
  generate_variant_forall:
    TILE: [{RANGE: [2, 3], SUFFIX: t}]
  shader_variants:
    - {NAME: mm}
    - NAME: one
      generate_variant_forall: {TILE: [{VALUE: "8", SUFFIX: ""}]}
      local_size: [256, 1, 1]
  khr_from_nv: true
  local_size: [128, 1, 1]
)yaml",
                                  "x/mm.yaml");
  EXPECT_THAT(names(s), ElementsAre("mm_t2", "mm_t2_khr", "mm_t3", "mm_t3_khr", "one", "one_khr"));
  const auto vs = expand_variants(s);
  EXPECT_EQ(vs[0].vk_minor, 3);
  EXPECT_FALSE(vs[0].optimize);
  EXPECT_EQ(vs[0].coopmat, Coopmat::NV);
  EXPECT_EQ(vs[0].khr_name, "mm_t2_khr");
  EXPECT_EQ(vs[1].coopmat, Coopmat::KHR);
  EXPECT_EQ(vs[1].derived_from, "mm_t2");
  EXPECT_EQ(vs[0].local_size[0], 128u);  // the spec's
  EXPECT_EQ(vs[4].local_size[0], 256u);  // the variant's own, and its KHR twin's
  EXPECT_EQ(vs[5].local_size[0], 256u);
}

// A variant's extra_bindings follow the spec's, numbered on from them, in that variant alone.
TEST(Spec, AVariantsExtraBindingsFollowTheSpecs) {
  const ShaderSpec s = parse_spec(R"yaml(
linear:
  parameter_names_with_default_values: {DTYPE: f32, STORAGE: buffer}
  generate_variant_forall:
    STORAGE: [buffer, texture3d]
  shader_variants:
    - {NAME: plain}
    - {NAME: ep, extra_bindings: [{name: other, type: tensor, access: read}]}
  bindings:
    - {name: out, type: tensor, access: write}
    - {name: weight, type: buffer}
)yaml",
                                  "specs/linear.yaml");
  const auto vs = expand_variants(s);
  ASSERT_EQ(vs.size(), 4u);
  EXPECT_EQ(vs[0].name, "ep_buffer");
  ASSERT_EQ(vs[0].bindings.size(), 3u);
  EXPECT_EQ(vs[0].bindings[2].name, "other");
  EXPECT_EQ(vs[0].bindings[2].binding, 2u);
  EXPECT_EQ(vs[1].bindings[2].type, DescriptorType::StorageImage);  // a tensor in the variant's storage
  EXPECT_EQ(vs[2].bindings.size(), 2u);                              // plain_buffer
}

// `chain: {PARAM: value}`: each variant with that value gets a twin `<name>_chain` with the
// counters' binding and the push constant `ivec4 chain` last (16-byte aligned), and no operators.
TEST(Spec, ChainTwinsAddTheCountersBindingAndPushConstant) {
  const ShaderSpec s = parse_spec(R"yaml(
linear:
  parameter_names_with_default_values: {STORAGE: buffer, SPLIT: none}
  shader_variants:
    - {NAME: plain, OPS: [aten.linear.default]}
    - {NAME: gemv, OPS: [aten.linear.default], SPLIT: gemv, extra_bindings: [{name: other, type: tensor}]}
  bindings:
    - {name: out, type: tensor, access: write}
  push_constants:
    - {name: k, type: int}
  chain: {SPLIT: gemv}
)yaml",
                                  "specs/linear.yaml");
  EXPECT_THAT(names(s), ElementsAre("gemv", "gemv_chain", "plain"));
  const auto vs = expand_variants(s);
  const Variant& twin = vs[1];
  EXPECT_TRUE(twin.ops.empty());
  ASSERT_EQ(twin.bindings.size(), 3u);
  EXPECT_EQ(twin.bindings[2].name, "chain");
  EXPECT_EQ(twin.bindings[2].binding, 2u);
  EXPECT_EQ(*twin.param("VKC_CHAIN_BINDING"), "2");
  EXPECT_EQ(twin.param("VKC_CHAIN_BY_DEFAULT"), nullptr);  // (chain_by_default: true adds it)
  ASSERT_EQ(twin.push_constants.size(), 2u);
  EXPECT_EQ(twin.push_constants[1].name, "chain");
  EXPECT_EQ(twin.push_constants[1].offset, 16u);
  EXPECT_EQ(twin.push_constant_bytes, 32u);
  EXPECT_EQ(vs[0].bindings.size(), 2u);  // the original unchanged
  EXPECT_EQ(vs[0].push_constant_bytes, 4u);
  EXPECT_EQ(vs[0].param("VKC_CHAIN_BINDING"), nullptr);
  EXPECT_THAT(error_of("s:\n  parameter_names_with_default_values: {A: x}\n  chain: {B: y}\n"),
              HasSubstr("specs/bad.yaml:3: chain: 'B' is not declared"));
  EXPECT_THAT(error_of("s:\n  parameter_names_with_default_values: {A: x}\n  chain: true\n  chain_by_default: {B: y}\n"),
              HasSubstr("specs/bad.yaml:4: chain_by_default: 'B' is not declared"));
}

// `chain_by_default: {PARAM: value}`: only the twins of the variants with that value carry
// VKC_CHAIN_BY_DEFAULT (chained where VKC_VULKAN_CHAIN is unset); `true` marks every twin.
TEST(Spec, ChainByDefaultMarksTheTwinsOfTheVariantsNamed) {
  const auto marked = [](const std::string& by_default) {
    const ShaderSpec s = parse_spec(R"yaml(
linear:
  parameter_names_with_default_values: {EPILOGUE: "0", MULTI: "0"}
  shader_variants:
    - {NAME: a, OPS: [aten.linear.default]}
    - {NAME: a_ep, OPS: [aten.linear.default], EPILOGUE: "1"}
    - {NAME: a_multi, OPS: [aten.linear.default], MULTI: "1"}
    - {NAME: a_ep_multi, OPS: [aten.linear.default], EPILOGUE: "1", MULTI: "1"}
  bindings:
    - {name: out, type: buffer, access: write}
  chain: true
  chain_by_default: )yaml" + by_default + "\n",
                                    "specs/linear.yaml");
    std::vector<std::string> out;
    for (const Variant& v : expand_variants(s))
      if (v.param("VKC_CHAIN_BY_DEFAULT")) out.push_back(v.name);
    return out;
  };
  EXPECT_THAT(marked("{EPILOGUE: \"1\"}"), UnorderedElementsAre("a_ep_chain", "a_ep_multi_chain"));
  EXPECT_THAT(marked("{EPILOGUE: \"1\", MULTI: \"0\"}"), ElementsAre("a_ep_chain"));
  EXPECT_THAT(marked("true"), UnorderedElementsAre("a_chain", "a_ep_chain", "a_multi_chain", "a_ep_multi_chain"));
  EXPECT_THAT(marked("false"), ElementsAre());
}

TEST(Spec, ErrorsNameFileAndLineOnOneLine) {
  struct Case {
    const char* yaml;
    const char* expected;
  } cases[] = {
      {"s:\n  parameter_names_with_default_values: {A: x}\n  bogus: 1\n", "specs/bad.yaml:3: unknown key 'bogus'"},
      {"s:\n  parameter_names_with_default_values:\n    A: x\n    A: y\n", "specs/bad.yaml:4: duplicate key 'A'"},
      {"s:\n  parameter_names_with_default_values: {A: x}\n  shader_variants:\n    - {NAME: v, B: y}\n",
       "specs/bad.yaml:4: 'B' is not declared"},
      {"s:\n  shader_variants:\n    - {NAME: v, lower: y}\n", "specs/bad.yaml:3: unknown key 'lower'"},
      {"s:\n  shader_variants:\n    - {NAME: v, local_size: [0, 1, 1]}\n", "specs/bad.yaml:3: local_size values must be"},
      {"s:\n  parameter_names_with_default_values: {A: x}\n  generate_variant_forall:\n    A: [{RANGE: [3, 1]}]\n",
       "specs/bad.yaml:4: RANGE must be"},
      {"s:\n  push_constants:\n    - {name: m, type: mat4}\n", "specs/bad.yaml:3: push constant type 'mat4'"},
      {"s:\n  bindings: [{name: x, type: tensor}]\n", "specs/bad.yaml:1: s: binding 'x' takes its storage from STORAGE"},
      {"s:\n  parameter_names_with_default_values: {VK_VERSION: '2.0'}\n", "specs/bad.yaml:1: s: VK_VERSION '2.0'"},
      {"s: [1,\n", "specs/bad.yaml:2: YAML:"},
      {"a: {}\nb: {}\n", "specs/bad.yaml:1: a spec file holds exactly one top-level key"},
      {"s:\n  shader_variants:\n    - {NAME: 'bad name'}\n", "is not a C identifier"},
  };
  for (const Case& c : cases) {
    const std::string e = error_of(c.yaml);
    EXPECT_THAT(e, HasSubstr(c.expected)) << c.yaml;
    EXPECT_EQ(e.find('\n'), std::string::npos) << e;
  }
}

}  // namespace
}  // namespace vkc::codegen
