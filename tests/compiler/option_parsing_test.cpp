#include <gtest/gtest.h>

#include "vkc/compiler/option_parsing.h"

namespace vkc::compiler {
namespace {

TEST(OptionParsing, InputShape) {
  auto [name, dims] = parse_input_shape("x=1x3x224x224");
  EXPECT_EQ(name, "x");
  EXPECT_EQ(dims, (std::vector<int64_t>{1, 3, 224, 224}));
  auto [odd, odd_dims] = parse_input_shape("input:0=1x128");  // names with odd characters
  EXPECT_EQ(odd, "input:0");
  EXPECT_EQ(parse_input_shape("a=b=7").first, "a=b");
  for (const char* bad : {"x", "=1x2", "x=", "x=1xx2", "x=0x2", "x=-1", "x=1x2x", "x=12345678901234567890"})
    EXPECT_THROW(parse_input_shape(bad), OptionError) << bad;
}

TEST(OptionParsing, TextureLimits) {
  EXPECT_EQ(parse_texture_limits("2048,2048,1024"), (serializer::TextureLimits{2048, 2048, 1024}));
  for (const char* bad : {"1,2", "1,2,3,4", "a,b,c", "1,,3", "0,1,1", "1,1,4294967296"})
    EXPECT_THROW(parse_texture_limits(bad), OptionError) << bad;
}

}  // namespace
}  // namespace vkc::compiler
