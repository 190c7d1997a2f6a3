#include "vkc/serializer/compile_options.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "vkc/serializer/errors.h"

namespace vkc::serializer {
namespace {

using Bytes = std::vector<uint8_t>;

CompileOptions all_options() {
  CompileOptions o;
  o.small_texture_limits = true;
  o.skip_memory_planning = true;
  o.force_fp16 = true;
  o.downcast_64_bit = false;
  o.require_dynamic_shapes = true;
  o.skip_tag_memory_metadata = false;
  o.skip_bool_tensors = true;
  o.texture_limits = TextureLimits{16384, 2048, 0x01020304};
  o.storage_type_override = StorageType::Texture3D;
  o.memory_layout_override = MemoryLayout::PackedInt8_4C1W;
  o.unknown = {{"alias_buffer_mutations", {1}}, {"external_constants_max_data_bytes", {0, 0, 0, 1, 0, 0, 0, 0}}};
  return o;
}

TEST(CompileOptions, EveryKeyRoundTripsBothWays) {
  const CompileOptions options = all_options();
  const std::vector<CompileSpec> specs = options.to_specs();
  EXPECT_EQ(CompileOptions::from_specs(specs), options);
  EXPECT_EQ(CompileOptions::from_specs(specs).to_specs(), specs);
  EXPECT_EQ(specs.size(), 14u);  // 2 enums + 3 limits + 7 bools + 2 unknown
}

TEST(CompileOptions, ExactBytesPerKey) {
  const std::vector<CompileSpec> expected = {
      {"storage_type_override", {1, 0, 0, 0}},
      {"memory_layout_override", {8, 0, 0, 0}},
      {"texture_limits_x", {0x00, 0x40, 0, 0}},
      {"texture_limits_y", {0x00, 0x08, 0, 0}},
      {"texture_limits_z", {4, 3, 2, 1}},
      {"small_texture_limits", {1}},
      {"skip_memory_planning", {1}},
      {"force_fp16", {1}},
      {"downcast_64_bit", {0}},
      {"require_dynamic_shapes", {1}},
      {"skip_tag_memory_metadata", {0}},
      {"skip_bool_tensors", {1}},
      {"alias_buffer_mutations", {1}},
      {"external_constants_max_data_bytes", {0, 0, 0, 1, 0, 0, 0, 0}},
  };
  EXPECT_EQ(all_options().to_specs(), expected);
}

TEST(CompileOptions, SingleFieldGivesOnlyItsKeys) {
  CompileOptions o;
  EXPECT_TRUE(o.to_specs().empty());
  EXPECT_EQ(CompileOptions::from_specs({}), o);
  o.force_fp16 = true;
  EXPECT_EQ(o.to_specs(), (std::vector<CompileSpec>{{"force_fp16", {1}}}));
  o = {};
  o.storage_type_override = StorageType::Buffer;
  EXPECT_EQ(o.to_specs(), (std::vector<CompileSpec>{{"storage_type_override", {0, 0, 0, 0}}}));
  o = {};
  o.texture_limits = TextureLimits{1, 2, 3};
  EXPECT_EQ(o.to_specs().size(), 3u);
}

// ExecuTorch once dropped these two keys on decode (PR #20138); never again.
TEST(CompileOptions, SmallTextureLimitsAndSkipMemoryPlanningSurviveDecode) {
  for (bool value : {false, true}) {
    CompileOptions o;
    o.small_texture_limits = value;
    o.skip_memory_planning = value;
    const CompileOptions decoded = CompileOptions::from_specs(o.to_specs());
    EXPECT_EQ(decoded.small_texture_limits, value);
    EXPECT_EQ(decoded.skip_memory_planning, value);
    EXPECT_TRUE(decoded.unknown.empty());
  }
}

TEST(CompileOptions, UnknownKeysKeptVerbatimInOrder) {
  const std::vector<CompileSpec> specs = {
      {"zzz_future", {9, 8, 7}}, {"force_fp16", {0}}, {"buffer_limit", {}}, {"warmup_execute_after_compile", {1}}};
  const CompileOptions o = CompileOptions::from_specs(specs);
  EXPECT_EQ(o.force_fp16, false);
  ASSERT_EQ(o.unknown.size(), 3u);
  EXPECT_EQ(o.unknown[0], specs[0]);
  EXPECT_EQ(o.unknown[1], specs[2]);
  EXPECT_EQ(o.unknown[2], specs[3]);
  const auto again = o.to_specs();
  EXPECT_EQ(std::vector<CompileSpec>(again.end() - 3, again.end()), o.unknown);
}

void expect_error(const std::vector<CompileSpec>& specs, const std::string& fragment) {
  try {
    CompileOptions::from_specs(specs);
    ADD_FAILURE() << "no error; expected one containing '" << fragment << "'";
  } catch (const SerializeError& e) {
    EXPECT_THAT(e.what(), testing::HasSubstr(fragment));
  }
}

TEST(CompileOptions, DecodeErrors) {
  expect_error({{"storage_type_override", {1}}}, "'storage_type_override' must be 4 byte(s), got 1");
  expect_error({{"memory_layout_override", {1, 0, 0, 0, 0}}}, "must be 4 byte(s), got 5");
  expect_error({{"force_fp16", {1, 0, 0, 0}}}, "'force_fp16' must be 1 byte(s), got 4");
  expect_error({{"skip_memory_planning", {}}}, "got 0");
  expect_error({{"small_texture_limits", {2}}}, "'small_texture_limits' must be 0 or 1, got 2");
  expect_error({{"texture_limits_x", {1, 0}}, {"texture_limits_y", {1, 0, 0, 0}}, {"texture_limits_z", {1, 0, 0, 0}}},
               "'texture_limits_x' must be 4 byte(s)");
  expect_error({{"memory_layout_override", {7, 0, 0, 0}}}, "unknown value 7");
  expect_error({{"storage_type_override", {3, 0, 0, 0}}}, "unknown value 3");
  expect_error({{"storage_type_override", {1, 1, 0, 0}}}, "unknown value 257");
  expect_error({{"texture_limits_x", {1, 0, 0, 0}}, {"texture_limits_y", {1, 0, 0, 0}}},
               "'texture_limits_z' is missing");
  expect_error({{"texture_limits_y", {1, 0, 0, 0}}}, "'texture_limits_x' is missing");
  expect_error({{"force_fp16", {1}}, {"force_fp16", {1}}}, "'force_fp16' appears more than once");
  expect_error({{"mystery", {1}}, {"mystery", {2}}}, "'mystery' appears more than once");
}

TEST(CompileOptions, EnumNames) {
  for (auto t : {StorageType::Buffer, StorageType::Texture3D, StorageType::Texture2D, StorageType::Default})
    EXPECT_EQ(storage_type_from_string(to_string(t)), t);
  for (auto l : {MemoryLayout::WidthPacked, MemoryLayout::HeightPacked, MemoryLayout::ChannelsPacked,
                 MemoryLayout::PackedInt8_4W4C, MemoryLayout::PackedInt8_4H4W, MemoryLayout::PackedInt8_4W,
                 MemoryLayout::PackedInt8_4C, MemoryLayout::PackedInt8_4C1W, MemoryLayout::PackedInt8_Conv2d,
                 MemoryLayout::Default})
    EXPECT_EQ(memory_layout_from_string(to_string(l)), l);
  EXPECT_EQ(to_string(StorageType::Texture3D), "texture3d");
  EXPECT_EQ(to_string(MemoryLayout::ChannelsPacked), "channels_packed");
  EXPECT_EQ(storage_type_from_string("Texture2D"), StorageType::Texture2D);
  EXPECT_EQ(storage_type_from_string("texture"), std::nullopt);
  EXPECT_EQ(memory_layout_from_string(""), std::nullopt);
}

}  // namespace
}  // namespace vkc::serializer
