#include <gtest/gtest.h>

#include <algorithm>

#include "common/error_of.h"
#include "vkc/partitioner/limits.h"

namespace vkc::partitioner {
namespace {

ir::TensorType f32(std::vector<int64_t> s) { return {ir::DType::Float32, ir::Shape::of(s)}; }

TEST(TextureExtents, PackedDimIsDividedByFourAndBatchFoldsIntoDepth) {
  using L = ir::Layout;
  EXPECT_EQ(texture_extents({2, 10, 7, 9}, L::ChannelsPacked), (std::array<int64_t, 3>{9, 7, 3 * 2}));
  EXPECT_EQ(texture_extents({2, 10, 7, 9}, L::WidthPacked), (std::array<int64_t, 3>{3, 7, 20}));
  EXPECT_EQ(texture_extents({2, 10, 7, 9}, L::HeightPacked), (std::array<int64_t, 3>{9, 2, 20}));
  EXPECT_EQ(texture_extents({5}, L::WidthPacked), (std::array<int64_t, 3>{2, 1, 1}));
}

TEST(RepMisfit, ExactlyAtTheLimitFitsAndPackedDimRoundsUp) {
  const ir::TensorRep width{ir::Storage::Texture3D, ir::Layout::WidthPacked};
  const auto small = DeviceLimits::small_texture();
  // width-packed: x = ceil(W / 4). 8192 -> 2048 fits; 8193 -> 2049 does not.
  EXPECT_FALSE(rep_misfit(f32({1, 1, 1, 8192}), width, small).has_value());
  EXPECT_EQ(rep_misfit(f32({1, 1, 1, 8193}), width, small), "texture extent x=2049 > 2048 (small-texture)");
  // y is not packed: 2048 fits, 2049 does not.
  EXPECT_FALSE(rep_misfit(f32({1, 1, 2048, 4}), width, small).has_value());
  EXPECT_EQ(rep_misfit(f32({1, 1, 2049, 4}), width, small), "texture extent y=2049 > 2048 (small-texture)");
  // z = C * N: batch folds into depth.
  EXPECT_FALSE(rep_misfit(f32({2, 1024, 1, 4}), width, small).has_value());
  EXPECT_EQ(rep_misfit(f32({3, 1024, 1, 4}), width, small), "texture extent z=3072 > 2048 (small-texture)");
}

TEST(RepMisfit, NamesTheAxisTheValueAndTheLimits) {
  const ir::TensorRep tex{ir::Storage::Texture3D, ir::Layout::ChannelsPacked};
  // 1 x 8400 x 4 x 4, channels-packed: z = ceil(8400 / 4) = 2100.
  EXPECT_EQ(rep_misfit(f32({1, 8400, 4, 4}), tex, DeviceLimits::small_texture()),
            "texture extent z=2100 > 2048 (small-texture)");
  EXPECT_EQ(rep_misfit(f32({1, 8400, 4, 4}), tex, DeviceLimits::default_limits()),
            "texture extent z=2100 > 2048 (default)");
  EXPECT_EQ(rep_misfit(f32({1, 1, 1, 4096}), tex, DeviceLimits::small_texture()),
            "texture extent x=4096 > 2048 (small-texture)");
  EXPECT_FALSE(rep_misfit(f32({1, 1, 1, 4096}), tex, DeviceLimits::default_limits()).has_value());
  EXPECT_EQ(rep_misfit(f32({1, 1, 1, 1, 1}), tex, DeviceLimits::default_limits()), "rank 5 > 4 cannot be a texture");
  const ir::TensorRep buf{ir::Storage::Buffer, ir::Layout::WidthPacked};
  EXPECT_FALSE(rep_misfit(f32({1, 8400, 4, 4}), buf, DeviceLimits::small_texture()).has_value());
  DeviceLimits tiny;
  tiny.max_buffer_bytes = 40;
  tiny.name = "tiny";
  EXPECT_FALSE(rep_misfit(f32({10}), buf, tiny).has_value());  // exactly at the limit
  EXPECT_EQ(rep_misfit(f32({11}), buf, tiny), "buffer of 44 bytes > 40 (tiny)");
}

TEST(RepSet, PreferredOrderAndMembership) {
  EXPECT_EQ(ir::RepSet::all().preferred(), (ir::TensorRep{ir::Storage::Texture3D, ir::Layout::ChannelsPacked}));
  const auto width_buffer = ir::RepSet::of(ir::Storage::Buffer, ir::Layout::WidthPacked);
  EXPECT_EQ(width_buffer.preferred(), (ir::TensorRep{ir::Storage::Buffer, ir::Layout::WidthPacked}));
  EXPECT_TRUE(width_buffer.contains({ir::Storage::Buffer, ir::Layout::WidthPacked}));
  EXPECT_FALSE(width_buffer.contains({ir::Storage::Texture3D, ir::Layout::WidthPacked}));
  EXPECT_FALSE(ir::RepSet().preferred().has_value());
}

}  // namespace
}  // namespace vkc::partitioner

#include "vkc/partitioner/device_profile.h"

namespace vkc::partitioner {
namespace {

TEST(DeviceProfiles, EveryBuiltInLoads) {
  const auto names = builtin_device_profile_names();
  for (const char* required : {"default", "small-texture", "lavapipe", "desktop-nvidia", "adreno-7xx", "mali-valhall"})
    EXPECT_NE(std::find(names.begin(), names.end(), required), names.end()) << required;
  for (const auto& n : names) {
    DeviceProfile p = builtin_device_profile(n);
    EXPECT_EQ(p.name, n);
    EXPECT_EQ(p.limits.name, n);
    EXPECT_GT(p.limits.max_buffer_bytes, 0u);
  }
  EXPECT_EQ(builtin_device_profile("small-texture").limits.texture, (std::array<uint32_t, 3>{2048, 2048, 2048}));
  EXPECT_EQ(builtin_device_profile("default").limits.texture, DeviceLimits::default_limits().texture);
  const DeviceProfile nv = builtin_device_profile("desktop-nvidia");
  EXPECT_EQ(nv.cooperative_matrix, CoopMat::Khr);
  EXPECT_EQ(nv.cooperative_matrix_shapes.at(0), (CoopMatShape{16, 16, 16, "f16", "f32"}));
  EXPECT_EQ(builtin_device_profile("lavapipe").subgroup_size, 8u);
}

TEST(DeviceProfiles, BadProfilesNameFileLineAndKey) {
  const std::string base =
      "name: x\ntexture_limits: [1, 2, 3]\nmax_storage_buffer_range: 100\nfp16: true\nint8: true\nint16: false\n"
      "int8_dot_product: false\nsubgroup_size: 4\ncooperative_matrix: none\n";
  EXPECT_EQ(parse_device_profile(base, "p.yaml").limits.texture, (std::array<uint32_t, 3>{1, 2, 3}));
  auto error_of = [](const std::string& yaml) {
    return vkc::testing::error_of<ProfileError>([&] { parse_device_profile(yaml, "p.yaml"); });
  };
  EXPECT_EQ(error_of(base + "bogus: 1\n"), "p.yaml:10: unknown key 'bogus'");
  EXPECT_EQ(error_of("name: x\n"), "p.yaml:1: missing key 'texture_limits'");
  EXPECT_NE(error_of(base + "cooperative_matrix_shapes: []\n").find("no error"), std::string::npos);
  std::string bad_limits = base;
  bad_limits.replace(bad_limits.find("[1, 2, 3]"), 9, "[1, 2]");
  EXPECT_EQ(error_of(bad_limits), "p.yaml:2: texture_limits must be three positive integers [x, y, z]");
  std::string bad_type = base;
  bad_type.replace(bad_type.find("fp16: true"), 10, "fp16: maybe");
  EXPECT_EQ(error_of(bad_type), "p.yaml:4: 'fp16' has the wrong type");
  EXPECT_NE(error_of("name: [unclosed\n").find("p.yaml:"), std::string::npos);
  EXPECT_THROW(builtin_device_profile("nope"), ProfileError);
  EXPECT_THROW(load_device_profile("/nonexistent/profile.yaml"), ProfileError);
}

}  // namespace
}  // namespace vkc::partitioner
