#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

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

// The bulk widening (F16C where the CPU has it) gives the scalar function's bits for every half
// (subnormals, infinities, quiet and signalling NaNs with their payloads) at every offset of an
// 8-wide block, and blocks mixing NaNs with finite values.
TEST(Half, BulkWideningIsTheScalarOne) {
  std::vector<uint16_t> in;
  for (uint32_t h = 0; h < 0x10000; ++h) in.push_back(static_cast<uint16_t>(h));
  for (uint32_t h = 0; h < 0x10000; h += 97) in.insert(in.end(), {0x7c01, static_cast<uint16_t>(h), 0xfe00, 0x3c00});
  std::vector<float> out(in.size());
  for (size_t skip = 0; skip < 8; ++skip) {
    halves_to_floats(in.data() + skip, out.data(), in.size() - skip);
    for (size_t i = 0; i + skip < in.size(); ++i) {
      const float want = half_to_float(in[i + skip]);
      uint32_t a, b;
      std::memcpy(&a, &out[i], 4);
      std::memcpy(&b, &want, 4);
      ASSERT_EQ(a, b) << std::hex << "half " << in[i + skip] << " at offset " << skip;
    }
  }
}

// The bulk conversion (F16C where the CPU has it) gives the scalar function's bits on the clamped
// value: every half and its float neighbours, ties, the range's edges, infinities, NaNs, float
// subnormals and random bit patterns, at every offset of an 8-wide block.
TEST(Half, BulkSaturatedConversionIsTheScalarOne) {
  std::vector<float> in;
  auto bits = [](uint32_t b) {
    float f;
    std::memcpy(&f, &b, 4);
    return f;
  };
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const float f = half_to_float(static_cast<uint16_t>(h));
    uint32_t b;
    std::memcpy(&b, &f, 4);
    for (int d = -2; d <= 2; ++d) in.push_back(bits(b + static_cast<uint32_t>(d)));
    in.push_back(bits(b + 0x1000u));  // halfway to the next half
  }
  for (float f : {65504.0f, 65519.0f, 65520.0f, 1e30f, -1e30f, INFINITY, -INFINITY, NAN, -NAN, 1e-45f, -1e-40f, 0.0f, -0.0f})
    in.push_back(f);
  std::mt19937 rng(7);
  for (int i = 0; i < 1 << 20; ++i) in.push_back(bits(rng()));
  std::vector<uint16_t> out(in.size());
  for (size_t skip = 0; skip < 8; ++skip) {
    floats_to_halves_saturated(in.data() + skip, out.data(), in.size() - skip);
    for (size_t i = skip; i < in.size(); ++i) {
      const float x = in[i];
      const uint16_t want = std::isnan(x) ? float_to_half(x) : float_to_half(std::clamp(x, -65504.0f, 65504.0f));
      ASSERT_EQ(out[i - skip], want) << std::hex << "bits " << *reinterpret_cast<const uint32_t*>(&in[i]);
    }
  }
}

}  // namespace
}  // namespace vkc::ir
