// vkc::CompileOptions <-> the CompileSpec list every delegate carries.
#include <gtest/gtest.h>

#include "api_test_support.h"

namespace vkc::test {
namespace {

TEST(ApiOptions, DefaultsGiveAnEmptySpecList) {
  const auto specs = CompileOptions{}.to_compile_specs();
  ASSERT_TRUE(specs.has_value());
  EXPECT_TRUE(specs->empty());
}

TEST(ApiOptions, SpecListsRoundTripIncludingKeysWithoutAField) {
  CompileOptions o;
  o.small_texture_limits = false;  // set to false still travels
  o.force_fp16 = true;
  o.texture_limits = TextureLimits{1, 2, 3};
  serializer::CompileOptions extra;
  extra.downcast_64_bit = false;
  o.other_specs = extra.to_specs();

  std::string error;
  const auto specs = o.to_compile_specs(&error);
  ASSERT_TRUE(specs.has_value()) << error;
  EXPECT_EQ(specs->size(), 1u + 1u + 3u + 1u);
  const auto back = CompileOptions::from_compile_specs(*specs, &error);
  ASSERT_TRUE(back.has_value()) << error;
  EXPECT_EQ(*back, o);
  EXPECT_EQ(back->payload_options()->downcast_64_bit, std::optional<bool>(false));
}

TEST(ApiOptions, MalformedSpecsAreReportedNotThrown) {
  std::string error;
  const std::vector<CompileSpec> bad = {{"force_fp16", {7}}};
  EXPECT_FALSE(CompileOptions::from_compile_specs(bad, &error).has_value());
  EXPECT_NE(error.find("force_fp16"), std::string::npos) << error;

  CompileOptions o;
  o.other_specs = {{"force_fp16", {1}}};  // has its own field
  EXPECT_FALSE(o.to_compile_specs(&error).has_value());
  EXPECT_NE(error.find("own CompileOptions field"), std::string::npos) << error;
  const std::vector<Diagnostic> ds = check_options(o);
  ASSERT_EQ(ds.size(), 1u);
  EXPECT_EQ(ds[0].severity, Severity::Error);
}

TEST(ApiOptions, VersionIsTheProjectVersion) { EXPECT_FALSE(version().empty()); }

}  // namespace
}  // namespace vkc::test
