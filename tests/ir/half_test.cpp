#include <gtest/gtest.h>

#include <cmath>

#include "vkc/ir/half.h"

namespace vkc::ir {
namespace {

TEST(Half, KnownEncodings) {
  EXPECT_EQ(float_to_half(1.0f), 0x3c00);
  EXPECT_EQ(float_to_half(-2.0f), 0xc000);
  EXPECT_EQ(float_to_half(65504.0f), 0x7bff);
  EXPECT_EQ(float_to_half(1e6f), 0x7c00);             // overflow -> inf
  EXPECT_EQ(float_to_half(5.9604645e-8f), 0x0001);    // smallest subnormal
  EXPECT_EQ(float_to_half(0.0f), 0x0000);
  EXPECT_TRUE(std::isnan(half_to_float(float_to_half(NAN))));
}

TEST(Half, RoundTripsEveryFiniteHalf) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    if ((h & 0x7c00) == 0x7c00) continue;  // inf / nan
    const float f = half_to_float(static_cast<uint16_t>(h));
    EXPECT_EQ(float_to_half(f), h) << std::hex << h;
  }
}

TEST(Half, RoundsToNearestEven) {
  // 1 + 2^-11 lies halfway between 1 and the next half (1 + 2^-10): ties go to even (1.0).
  EXPECT_EQ(float_to_half(1.0f + std::ldexp(1.0f, -11)), 0x3c00);
  EXPECT_EQ(float_to_half(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);
}

}  // namespace
}  // namespace vkc::ir
