// The table of bounded dynamic dims a resizing delegate carries (serializer/dynamic_dims.h): its
// text form round-trips, the symbols' values come from the inputs' shapes within their ranges, a
// resized graph has every listed dim evaluated, and malformed tables or out-of-range values are
// one clear error each.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "common/error_of.h"
#include "vkc/serializer/dynamic_dims.h"
#include "vkc/serializer/errors.h"

namespace vkc::serializer {
namespace {

using ::testing::HasSubstr;

// Two symbols (batch: dim 0 of input 0, sequence: dim 1 of input 0) and the dims that follow them.
DynamicDims table() {
  DynamicDims t;
  t.symbols = {{"batch", 0, 0, 1, 4}, {"sequence", 0, 1, 2, 16}};
  t.dims = {{0, 0, 0, {1, 0}}, {0, 1, 0, {0, 1}}, {1, 0, 0, {1, 0}}, {1, 1, 1, {0, 2}}};  // v1 [B, 2S + 1]
  return t;
}

VkGraph graph() {
  VkGraph g;
  VkTensor in, out;
  in.dims = {4, 16, 8};
  out.dims = {4, 33};
  g.values = {in, out, int64_t{3}};
  g.input_ids = {0};
  g.output_ids = {1};
  return g;
}

std::string what(const std::function<void()>& f) { return vkc::testing::error_of<SerializeError>(f); }

TEST(DynamicDims, TheTextFormRoundTrips) {
  const DynamicDims t = table();
  const auto bytes = t.encode();
  const std::string text(bytes.begin(), bytes.end());
  EXPECT_THAT(text, HasSubstr("sym sequence 0 1 2 16\n"));
  EXPECT_THAT(text, HasSubstr("dim 1 1 1 0 2\n"));
  const DynamicDims back = DynamicDims::decode(bytes);
  EXPECT_EQ(back.encode(), bytes);
  ASSERT_EQ(back.symbols.size(), 2u);
  EXPECT_EQ(back.symbols[1].name, "sequence");
  EXPECT_EQ(back.dims.size(), 4u);
}

TEST(DynamicDims, AResizedGraphHasEveryListedDimEvaluated) {
  const DynamicDims t = table();
  const std::vector<std::vector<int64_t>> shapes{{2, 5, 8}};
  const auto s = t.symbol_values(shapes);
  EXPECT_EQ(s, (std::vector<int64_t>{2, 5}));
  const VkGraph g = t.resized(graph(), s);
  EXPECT_EQ(std::get<VkTensor>(g.values[0]).dims, (std::vector<uint32_t>{2, 5, 8}));
  EXPECT_EQ(std::get<VkTensor>(g.values[1]).dims, (std::vector<uint32_t>{2, 11}));
  EXPECT_EQ(std::get<int64_t>(g.values[2]), 3);  // not a listed tensor dim: unchanged
}

TEST(DynamicDims, OutOfRangeValuesAndMalformedTablesAreOneErrorEach) {
  const DynamicDims t = table();
  EXPECT_THAT(what([&] { t.symbol_values(std::vector<std::vector<int64_t>>{{2, 1, 8}}); }),
              HasSubstr("input 0 dim 1 ('sequence') is 1; the program takes 2 to 16"));
  EXPECT_THAT(what([&] { t.symbol_values(std::vector<std::vector<int64_t>>{{2}}); }), HasSubstr("which the inputs given lack"));
  EXPECT_THAT(what([&] { t.resized(graph(), std::vector<int64_t>{5, 16}); }), HasSubstr("outside [0, 4]"));
  DynamicDims huge = t;
  huge.dims[0].coeffs = {INT64_MAX, 0};
  EXPECT_THAT(what([&] { huge.resized(graph(), std::vector<int64_t>{2, 5}); }), HasSubstr("value 0 dim 0 would be"));
  DynamicDims bad = t;
  bad.dims.push_back({2, 0, 0, {1, 0}});  // an Int, not a tensor
  EXPECT_THAT(what([&] { bad.resized(graph(), std::vector<int64_t>{2, 5}); }), HasSubstr("is not a tensor dim"));
  auto decode = [](const std::string& s) { return what([&] { DynamicDims::decode(std::vector<uint8_t>(s.begin(), s.end())); }); };
  EXPECT_THAT(decode(""), HasSubstr("no symbols"));
  EXPECT_THAT(decode("sym s 0 1 4 2\n"), HasSubstr("line 1: malformed symbol"));
  EXPECT_THAT(decode("sym s 0 1 1 4\ndim 0 1 0\n"), HasSubstr("line 2: fewer coefficients than symbols"));
  EXPECT_THAT(decode("sym s 0 1 1 4\ndim 0 1 0 1 7\n"), HasSubstr("line 2: trailing text"));
  EXPECT_THAT(decode("sym s 0 1 1 4\nxyz\n"), HasSubstr("unknown entry 'xyz'"));
  EXPECT_THAT(decode("sym s 0 1 1 4\ndim 0 1 0 1\nsym t 0 2 1 4\n"), HasSubstr("a symbol after the dims"));
}

}  // namespace
}  // namespace vkc::serializer
