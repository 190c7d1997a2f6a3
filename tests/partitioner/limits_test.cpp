#include <gtest/gtest.h>

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
  tiny.buffer_elements = 10;
  tiny.name = "tiny";
  EXPECT_EQ(rep_misfit(f32({11}), buf, tiny), "buffer of 11 elements > 10 (tiny)");
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
