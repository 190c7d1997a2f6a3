#include <gtest/gtest.h>

#include "vkc/ir/op_registry.h"

namespace vkc::ir {
namespace {

TEST(OpSchema, ParsesArgumentsDefaultsAndOutputs) {
  OpSchema s = parse_op_schema(
      "aten.avg_pool2d.default(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, "
      "bool ceil_mode=False, bool count_include_pad=True, int? divisor_override=None) -> Tensor",
      "pooling");
  ASSERT_EQ(s.args.size(), 7u);
  EXPECT_EQ(s.args[0].kind, ArgKind::Tensor);
  EXPECT_EQ(s.args[1].kind, ArgKind::IntList);
  EXPECT_FALSE(s.args[1].default_value.has_value());
  EXPECT_EQ(std::get<std::vector<int64_t>>(*s.args[2].default_value), std::vector<int64_t>{});
  // ATen's shorthand: int[2] padding=0 means [0, 0].
  EXPECT_EQ(std::get<std::vector<int64_t>>(*s.args[3].default_value), (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(std::get<bool>(*s.args[5].default_value), true);
  EXPECT_TRUE(s.args[6].optional);
  EXPECT_TRUE(std::holds_alternative<std::monostate>(*s.args[6].default_value));
  EXPECT_EQ(s.num_outputs, 1u);
  EXPECT_EQ(s.num_tensor_args(), 1u);
}

TEST(OpSchema, KwargOnlyAndMultipleOutputs) {
  OpSchema s = parse_op_schema("x.y(Tensor a, *, Scalar alpha=1, ScalarType? dtype=None) -> (Tensor, Tensor)", "f");
  EXPECT_TRUE(s.args[1].kwarg_only);
  EXPECT_EQ(std::get<int64_t>(*s.args[1].default_value), 1);
  EXPECT_EQ(s.args[2].kind, ArgKind::None);
  EXPECT_EQ(s.num_outputs, 2u);
}

TEST(OpSchema, RejectsMalformedText) {
  EXPECT_THROW(parse_op_schema("no_parens -> Tensor", "f"), std::invalid_argument);
  EXPECT_THROW(parse_op_schema("f(Tensor) -> Tensor", "f"), std::invalid_argument);
  EXPECT_THROW(parse_op_schema("f(Blob x) -> Tensor", "f"), std::invalid_argument);
  EXPECT_THROW(parse_op_schema("f(bool b=maybe) -> Tensor", "f"), std::invalid_argument);
}

TEST(OpSchema, CheckAttrsNamesProblems) {
  const OpSchema& s = find_op("aten._softmax.default")->schema;
  EXPECT_TRUE(s.check_attrs({{"dim", int64_t{1}}, {"half_to_float", false}}).empty());
  auto missing = s.check_attrs({{"dim", int64_t{1}}});
  ASSERT_EQ(missing.size(), 1u);
  EXPECT_NE(missing[0].find("half_to_float"), std::string::npos);
  EXPECT_FALSE(s.check_attrs({{"dim", 1.5}, {"half_to_float", false}}).empty());
  EXPECT_FALSE(s.check_attrs({{"dim", int64_t{1}}, {"half_to_float", false}, {"bogus", int64_t{0}}}).empty());
}

TEST(OpRegistry, EveryEntryParsesAndHasAFamilyAndRepresentations) {
  ASSERT_FALSE(all_ops().empty());
  for (const OpDef& d : all_ops()) {
    EXPECT_FALSE(d.family().empty()) << d.name();
    EXPECT_TRUE(!d.io_reps.empty() || d.reps_for) << d.name();
    for (size_t i : d.self_prepacked) EXPECT_LT(i, d.schema.num_tensor_args()) << d.name();
  }
  EXPECT_EQ(op_family("aten.convolution.default"), "convolution");
  EXPECT_EQ(op_family("something.unknown"), "other");
  EXPECT_NE(find_op(kPrepackOp), nullptr);
}

TEST(OpRegistry, ReductionRepresentationsDependOnTheCall) {
  Graph g;
  Value* x = g.add_value("x", {DType::Float32, Shape::of({1, 8, 4, 4})});
  g.inputs.push_back(x);
  auto reps = [&](std::vector<int64_t> dims, bool keepdim) {
    Node* n = g.add_node(kVulkanDomain, "aten.mean.dim", {x}, {{DType::Float32, Shape::of({1})}});
    n->attrs() = {{"dim", dims}, {"keepdim", keepdim}};
    return find_op("aten.mean.dim")->reps(*n);
  };
  // H and W with keepdim: a texture packed along C.
  EXPECT_EQ(reps({-1, -2}, true).bits(), RepSet::of(Storage::Texture3D, Layout::ChannelsPacked).bits());
  // C and W: packed along H.
  EXPECT_EQ(reps({1, 3}, true).bits(), RepSet::of(Storage::Texture3D, Layout::HeightPacked).bits());
  // The last dim without keepdim: a width-packed buffer only.
  EXPECT_EQ(reps({3}, false).bits(), RepSet::of(Storage::Buffer, Layout::WidthPacked).bits());
  // Three dims: no kernel.
  EXPECT_TRUE(reps({1, 2, 3}, true).empty());
  EXPECT_TRUE(reps({1, 2}, false).empty());
}

}  // namespace
}  // namespace vkc::ir
