// Masks read by meaning (passes/src/attention/mask.h): every exporter's "minus infinity" hides a
// key; causal masks, causal masks in a window and anything else are told apart by their values.
#include <gtest/gtest.h>

#include <limits>

#include "attention/mask.h"

namespace vkc::passes::attention {
namespace {

// rows x keys, query row i at position first + i sees keys (p - window, p] (window 0: all <= p).
std::vector<float> mask(int64_t rows, int64_t keys, int64_t first, int64_t window, float hidden) {
  std::vector<float> m(static_cast<size_t>(rows * keys));
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < keys; ++j) {
      const int64_t p = first + i;
      m[i * keys + j] = j <= p && (window == 0 || j > p - window) ? 0.0f : hidden;
    }
  return m;
}

TEST(AttentionMask, EveryExportersMinusInfinityHides) {
  for (float hidden : {std::numeric_limits<float>::lowest(), -65504.0f, -std::numeric_limits<float>::infinity(),
                       -1e9f, -1e4f}) {
    const MaskKind k = classify_mask(mask(3, 8, 5, 0, hidden), 3, 8, 3, 5);
    EXPECT_TRUE(k.reason.empty()) << hidden << ": " << k.reason;
    EXPECT_EQ(k.window, 0);
  }
  EXPECT_FALSE(classify_mask(mask(3, 8, 5, 0, -100.0f), 3, 8, 3, 5).reason.empty());  // a bias, not a mask
}

TEST(AttentionMask, WindowsAreMeasured) {
  const MaskKind k = classify_mask(mask(3, 32, 20, 8, -65504.0f), 3, 32, 3, 20);
  EXPECT_TRUE(k.reason.empty()) << k.reason;
  EXPECT_EQ(k.window, 8);
  // Rows before the window fills see every key: still the same window.
  const MaskKind early = classify_mask(mask(8, 16, 0, 4, -1e9f), 8, 16, 8, 0);
  EXPECT_TRUE(early.reason.empty()) << early.reason;
  EXPECT_EQ(early.window, 4);
  // Within the first rows only: indistinguishable from causal.
  EXPECT_EQ(classify_mask(mask(3, 16, 0, 8, -1e9f), 3, 16, 3, 0).window, 0);
}

TEST(AttentionMask, WhatIsNeitherIsToldWhere) {
  std::vector<float> future = mask(2, 8, 5, 0, -1e9f);
  future[0 * 8 + 6] = 0.0f;  // row 0 (position 5) sees key 6
  EXPECT_NE(classify_mask(future, 2, 8, 2, 5).reason.find("not causal (row 0, column 6"), std::string::npos);
  std::vector<float> hole = mask(2, 8, 5, 0, -1e9f);
  hole[1 * 8 + 2] = -1e9f;  // padding inside the visible run
  EXPECT_NE(classify_mask(hole, 2, 8, 2, 5).reason.find("hides a key inside the visible run"), std::string::npos);
  std::vector<float> windows = mask(2, 16, 10, 4, -1e9f);
  windows[1 * 16 + 7] = 0.0f;  // row 1 sees 5 keys, row 0 4
  EXPECT_NE(classify_mask(windows, 2, 16, 2, 10).reason.find("different spans"), std::string::npos);
  EXPECT_NE(classify_mask(mask(1, 8, 5, 0, -1e9f), 1, 8, 3, 5).reason.find("one row for 3 queries"), std::string::npos);
}

}  // namespace
}  // namespace vkc::passes::attention
