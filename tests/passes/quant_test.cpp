// Weight quantization numerics: recipes, packing, known values, SQNR floors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <tuple>

#include "quant/int_quant.h"
#include "vkc/ir/half.h"
#include "vkc/passes/quantize.h"

namespace vkc::passes {
namespace {

using quant::Int4Grouped;

std::vector<float> gaussian(size_t n, uint32_t seed, float stddev = 0.02f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.0f, stddev);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

TEST(QuantRecipe, SeedRecipesParse) {
  const QuantRecipe a = parse_quant_recipe("8da4w");
  EXPECT_EQ(a.scheme, QuantScheme::Int8DynAct4Weight);
  EXPECT_EQ(a.group_size, 128);
  EXPECT_FALSE(a.embedding || a.force_fp16);
  const QuantRecipe b = parse_quant_recipe("8da4w-fp16-embedding");
  EXPECT_TRUE(b.embedding && b.force_fp16);
  EXPECT_EQ(b.embedding_group_size, 32);
  EXPECT_TRUE(parse_quant_recipe("8da4w-embedding-fp16").force_fp16);
  EXPECT_TRUE(parse_quant_recipe("8da4w-fp16").force_fp16);
  EXPECT_EQ(parse_quant_recipe("8da4w:32-embedding").group_size, 32);
  const QuantRecipe c = parse_quant_recipe("int4-weight-only");
  EXPECT_EQ(c.scheme, QuantScheme::Int4WeightOnly);
  EXPECT_EQ(c.group_size, 256);
  EXPECT_EQ(parse_quant_recipe("int4-weight-only:64").group_size, 64);
  EXPECT_EQ(parse_quant_recipe("int8-weight-only").scheme, QuantScheme::Int8WeightOnly);
}

TEST(QuantRecipe, BadRecipesSayWhy) {
  auto message = [](const char* text) {
    try {
      parse_quant_recipe(text);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message("8da3w").find("unknown recipe '8da3w'"), std::string::npos);
  EXPECT_NE(message("8da4w:48").find("group size '48'"), std::string::npos);
  EXPECT_NE(message("8da4w:x").find("group size 'x'"), std::string::npos);
  EXPECT_NE(message("int8-weight-only:32").find("per channel"), std::string::npos);
  EXPECT_NE(message("8da4w-fp16-fp16").find("twice"), std::string::npos);
}

TEST(Int4Packing, KnownBytesAndPadding) {
  // (odd + 8) << 4 | (even + 8); K = 3 pads to 8 -> 4 bytes per row, padding q = 0 (0x8 nibbles).
  const std::vector<int8_t> q = {-8, 7, 1, /* row 1 */ 0, -1, 2};
  const auto packed = quant::pack_int4(q, 2, 3);
  ASSERT_EQ(packed.size(), 8u);
  EXPECT_EQ(packed[0], 0xF0);
  EXPECT_EQ(packed[1], 0x89);
  EXPECT_EQ(packed[2], 0x88);
  EXPECT_EQ(packed[3], 0x88);
  EXPECT_EQ(packed[4], 0x78);
  EXPECT_EQ(packed[5], 0x8A);
  EXPECT_EQ(quant::unpack_int4(packed, 2, 3), q);
}

TEST(Int4Packing, RoundTripsEveryValue) {
  std::mt19937 rng(7);
  for (int64_t cols : {8, 12, 30, 64}) {
    std::vector<int8_t> q(static_cast<size_t>(5 * cols));
    for (int8_t& v : q) v = static_cast<int8_t>(static_cast<int>(rng() % 16) - 8);
    EXPECT_EQ(quant::unpack_int4(quant::pack_int4(q, 5, cols), 5, cols), q) << cols;
  }
}

TEST(Int4Quantize, KnownValuesFollowTorchao) {
  // One group of 32: max|w| = 7.5 -> scale 1; q = clamp(round_half_even(w), -8, 7).
  std::vector<float> w(32, 0.0f);
  w[0] = 7.5f;   // 7.5 rounds to 8 -> clamped 7
  w[1] = -7.5f;  // -8
  w[2] = 2.5f;   // half to even: 2
  w[3] = 1.5f;   // 2
  w[4] = -0.5f;  // -0
  w[5] = 3.2f;   // 3
  const Int4Grouped r = quant::quantize_int4_grouped(w.data(), 1, 32, 32);
  ASSERT_EQ(r.scales.size(), 1u);
  EXPECT_FLOAT_EQ(r.scales[0], 1.0f);
  const auto q = quant::unpack_int4(r.packed, 1, 32);
  EXPECT_EQ(q[0], 7);
  EXPECT_EQ(q[1], -8);
  EXPECT_EQ(q[2], 2);
  EXPECT_EQ(q[3], 2);
  EXPECT_EQ(q[4], 0);
  EXPECT_EQ(q[5], 3);
  EXPECT_EQ(r.group_sums[0], 7 - 8 + 2 + 2 + 3);
  // An all-zero group gets scale eps, not 0 (no division by zero), and q = 0.
  const std::vector<float> zeros(32, 0.0f);
  const Int4Grouped z = quant::quantize_int4_grouped(zeros.data(), 1, 32, 32);
  EXPECT_GT(z.scales[0], 0.0f);
  EXPECT_EQ(quant::unpack_int4(z.packed, 1, 32), std::vector<int8_t>(32, 0));
}

TEST(Int4Quantize, GroupsAreIndependentAndScalesTranspose) {
  // Row n, group g holds values up to (n + 1) * (g + 1) * 7.5 -> scale (n + 1) * (g + 1).
  const int64_t N = 4, K = 64, G = 32;
  std::vector<float> w(N * K);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t k = 0; k < K; ++k) w[n * K + k] = (k % G == 0) ? 7.5f * (n + 1) * (k / G + 1) : 0.0f;
  const Int4Grouped r = quant::quantize_int4_grouped(w.data(), N, K, G);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t g = 0; g < 2; ++g) EXPECT_FLOAT_EQ(r.scales[n * 2 + g], float((n + 1) * (g + 1)));
  const auto t = quant::transpose_padded<float>(r.scales, N, 2, 8);  // [G, N pad 8]
  ASSERT_EQ(t.size(), 16u);
  EXPECT_FLOAT_EQ(t[0 * 8 + 3], 4.0f);
  EXPECT_FLOAT_EQ(t[1 * 8 + 2], 6.0f);
  EXPECT_FLOAT_EQ(t[1 * 8 + 7], 0.0f);
}

TEST(Int8Quantize, KnownValues) {
  std::vector<float> w = {127.0f, -63.5f, 0.4f, 1.5f, /* row 1 */ 0.0f, 0.0f, 0.0f, 2.54f};
  const auto r = quant::quantize_int8_per_channel(w.data(), 2, 4);
  EXPECT_FLOAT_EQ(r.scales[0], 1.0f);
  EXPECT_EQ(r.q[0], 127);
  EXPECT_EQ(r.q[1], -64);  // -63.5: half to even
  EXPECT_EQ(r.q[2], 0);
  EXPECT_EQ(r.q[3], 2);
  EXPECT_FLOAT_EQ(r.scales[1], 0.02f);
  EXPECT_EQ(r.q[7], 127);
}

double sqnr_int4(int64_t group) {
  const int64_t N = 256, K = 1024;
  const auto w = gaussian(static_cast<size_t>(N * K), 11);
  const Int4Grouped r = quant::quantize_int4_grouped(w.data(), N, K, group);
  // Recompute from the packed form, as the runtime sees it.
  const auto q = quant::unpack_int4(r.packed, N, K);
  double signal = 0, noise = 0;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t k = 0; k < K; ++k) {
      const double x = w[n * K + k], y = q[n * K + k] * r.scales[n * (K / group) + k / group];
      signal += x * x;
      noise += (x - y) * (x - y);
    }
  EXPECT_NEAR(quant::sqnr_db(signal, noise), quant::sqnr_db(r.signal, r.noise), 0.05);
  return quant::sqnr_db(signal, noise);
}

// A derived weight (the importer's copy of a large weight at an unaligned file offset) is read a
// range at a time: f32 and f16 rows quantize as the same values in memory do (int4 and int8), and
// no read asks for more than a few rows.
TEST(RowReader, DerivedSourcesAreReadByRowsAndQuantizeLikeTheirBytes) {
  const int64_t n = 24, k = 96;
  const auto w = gaussian(static_cast<size_t>(n * k), 11);
  std::vector<uint16_t> h(w.size());
  ir::floats_to_halves_saturated(w.data(), h.data(), w.size());
  for (const bool half : {false, true}) {
    SCOPED_TRACE(half ? "f16" : "f32");
    const auto* bytes = half ? reinterpret_cast<const uint8_t*>(h.data()) : reinterpret_cast<const uint8_t*>(w.data());
    const size_t size = w.size() * (half ? 2 : 4);
    uint64_t largest = 0;
    const ir::TensorData derived = ir::TensorData::derived(size, 1, [&](uint64_t first, uint64_t count, uint8_t* out) {
      largest = std::max(largest, count);
      std::memcpy(out, bytes + first, count);
    });
    const auto in_memory = [&] {
      return half ? quant::RowReader(h.data(), n, k, false) : quant::RowReader(w.data(), n, k, false);
    };
    const Int4Grouped a = quant::quantize_int4_grouped(quant::RowReader(derived, half, n, k), n, k, 32);
    const Int4Grouped b = quant::quantize_int4_grouped(in_memory(), n, k, 32);
    EXPECT_EQ(a.packed, b.packed);
    EXPECT_EQ(a.scales, b.scales);
    EXPECT_EQ(a.group_sums, b.group_sums);
    const auto c = quant::quantize_int8_per_channel(quant::RowReader(derived, half, n, k), n, k);
    const auto d = quant::quantize_int8_per_channel(in_memory(), n, k);
    EXPECT_EQ(c.q, d.q);
    EXPECT_EQ(c.scales, d.scales);
    EXPECT_GT(largest, 0u);
    EXPECT_LE(largest, size / 4) << "the derived weight was read whole";
  }
}

// Gaussian weights: a 4-bit grouped quantizer gives ~20 dB at small groups, less as groups grow.
TEST(RowReader, TransposedSourcesQuantizeLikeTheirTranspose) {
  // A [K, N] = [64, 37] matrix read as [N, K] (N not a multiple of the 16-row block).
  const int64_t k = 64, n = 37;
  const auto kn = gaussian(static_cast<size_t>(k * n), 9);
  std::vector<float> nk(kn.size());
  for (int64_t r = 0; r < k; ++r)
    for (int64_t c = 0; c < n; ++c) nk[c * k + r] = kn[r * n + c];
  const Int4Grouped a = quant::quantize_int4_grouped(quant::RowReader(kn.data(), n, k, true), n, k, 32);
  const Int4Grouped b = quant::quantize_int4_grouped(nk.data(), n, k, 32);
  EXPECT_EQ(a.packed, b.packed);
  EXPECT_EQ(a.scales, b.scales);
  EXPECT_EQ(a.group_sums, b.group_sums);
  const auto c = quant::quantize_int8_per_channel(quant::RowReader(kn.data(), n, k, true), n, k);
  const auto d = quant::quantize_int8_per_channel(nk.data(), n, k);
  EXPECT_EQ(c.q, d.q);
  EXPECT_EQ(c.scales, d.scales);
}

TEST(QuantSqnr, FloorsOnGaussianWeights) {
  const double g32 = sqnr_int4(32), g64 = sqnr_int4(64), g128 = sqnr_int4(128), g256 = sqnr_int4(256);
  EXPECT_GT(g32, 19.5);
  EXPECT_GT(g64, 18.8);
  EXPECT_GT(g128, 18.2);
  EXPECT_GT(g256, 17.5);
  EXPECT_GT(g32, g256);
  const auto w = gaussian(256 * 1024, 12);
  const auto r8 = quant::quantize_int8_per_channel(w.data(), 256, 1024);
  EXPECT_GT(quant::sqnr_db(r8.signal, r8.noise), 38.0);
}

}  // namespace
}  // namespace vkc::passes

namespace vkc::passes::quant {
namespace {

// A MatMul-form weight ([K, N], read transposed) quantizes to exactly what its transpose does row by
// row: packed nibbles, scales, group sums, and the SQNR terms. Odd N and a K of several groups.
TEST(Int4Grouped, TransposedSourceQuantizesLikeItsTranspose) {
  const int64_t n = 37, k = 96, group = 32;
  std::vector<float> w(static_cast<size_t>(n * k)), wt(static_cast<size_t>(n * k));
  uint32_t state = 7;
  for (auto& x : w) {
    state = state * 1664525u + 1013904223u;
    x = (static_cast<float>(state >> 8) / 16777216.0f - 0.5f) * (1.0f + static_cast<float>(state % 5));
  }
  for (int64_t r = 0; r < n; ++r)
    for (int64_t c = 0; c < k; ++c) wt[static_cast<size_t>(c * n + r)] = w[static_cast<size_t>(r * k + c)];
  const Int4Grouped a = quantize_int4_grouped(w.data(), n, k, group);
  const Int4Grouped b = quantize_int4_grouped(RowReader(wt.data(), n, k, true), n, k, group);
  EXPECT_EQ(a.packed, b.packed);
  EXPECT_EQ(a.scales, b.scales);
  EXPECT_EQ(a.group_sums, b.group_sums);
  EXPECT_NEAR(a.signal, b.signal, 1e-6 * a.signal);
  EXPECT_NEAR(a.noise, b.noise, 1e-5 * a.noise);
}

// The packed weight as a derived constant (what a quantized compile writes) holds
// quantize_int4_grouped's packed bytes, whichever way it is read: in uneven ranges, for a row-major
// or a MatMul-form ([K, N]) weight, with K padded to the group size, with more rows than one block.
TEST(Int4Grouped, DerivedPackedRowsAreTheQuantizersBytes) {
  for (const auto& [n, k, padded] : {std::tuple<int64_t, int64_t, int64_t>{1500, 64, 64}, {37, 96, 96}, {41, 80, 96}}) {
    const int64_t group = 32;
    std::vector<float> w(static_cast<size_t>(n * k)), wt(w.size()), wp(static_cast<size_t>(n * padded), 0.0f);
    std::mt19937 rng(static_cast<uint32_t>(n));
    std::normal_distribution<float> d(0.0f, 0.02f);
    for (auto& x : w) x = d(rng);
    for (int64_t r = 0; r < n; ++r)
      for (int64_t c = 0; c < k; ++c) {
        wt[static_cast<size_t>(c * n + r)] = w[static_cast<size_t>(r * k + c)];
        wp[static_cast<size_t>(r * padded + c)] = w[static_cast<size_t>(r * k + c)];
      }
    const std::vector<uint8_t> want = quantize_int4_grouped(wp.data(), n, padded, group).packed;
    auto bytes = [](const std::vector<float>& v) {
      std::vector<uint8_t> b(v.size() * sizeof(float));
      std::memcpy(b.data(), v.data(), b.size());
      return ir::TensorData::owned(std::move(b));
    };
    for (const bool transposed : {false, true}) {
      const ir::TensorData packed = packed_int4_rows(bytes(transposed ? wt : w), false, transposed, n, k, padded, group);
      ASSERT_TRUE(packed.is_derived());
      ASSERT_EQ(packed.size(), want.size());
      std::vector<uint8_t> got(packed.size());
      for (size_t at = 0; at < got.size(); at += 1000)
        packed.read(at, {got.data() + at, std::min<size_t>(1000, got.size() - at)});
      EXPECT_EQ(got, want) << n << "x" << k << (transposed ? " transposed" : "");
    }
    // An fp16 weight: the quantizer's bytes for its values widened to f32.
    std::vector<uint16_t> h(w.size()), ht(w.size());
    std::vector<float> wide(static_cast<size_t>(n * padded), 0.0f);
    for (int64_t r = 0; r < n; ++r)
      for (int64_t c = 0; c < k; ++c) {
        const uint16_t x = ir::float_to_half(w[static_cast<size_t>(r * k + c)]);
        h[static_cast<size_t>(r * k + c)] = ht[static_cast<size_t>(c * n + r)] = x;
        wide[static_cast<size_t>(r * padded + c)] = ir::half_to_float(x);
      }
    const std::vector<uint8_t> want_half = quantize_int4_grouped(wide.data(), n, padded, group).packed;
    for (const bool transposed : {false, true}) {
      const std::vector<uint16_t>& src = transposed ? ht : h;
      std::vector<uint8_t> raw(src.size() * 2);
      std::memcpy(raw.data(), src.data(), raw.size());
      const ir::TensorData packed = packed_int4_rows(ir::TensorData::owned(raw), true, transposed, n, k, padded, group);
      std::vector<uint8_t> got(packed.size());
      packed.read(0, got);
      EXPECT_EQ(got, want_half) << n << "x" << k << " fp16" << (transposed ? " transposed" : "");
      // and what run_jobs computes from the fp16 source directly
      if (padded == k) {
        EXPECT_EQ(quantize_int4_grouped(RowReader(src.data(), n, k, transposed), n, k, group).packed, want_half);
      }
    }
  }
}

}  // namespace
}  // namespace vkc::passes::quant
