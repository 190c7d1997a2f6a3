#include <gtest/gtest.h>

#include <cfloat>

#include "common/graph_builder.h"
#include "vkc/passes/passes.h"

namespace vkc::passes {
namespace {
using testing::f32;

TEST(RemoveIdentity, ReroutesUsesAndDropsTheNode) {
  ir::Graph g;
  ir::Value* x = testing::input(g, "x", f32({2}));
  ir::Node* relu = testing::onnx(g, "Relu", {x}, f32({2}));
  ir::Node* id = testing::onnx(g, "Identity", {relu->output(0)}, f32({2}));
  ir::Node* neg = testing::onnx(g, "Neg", {id->output(0)}, f32({2}));
  g.outputs.push_back(neg->output(0));
  PassContext ctx;
  remove_identity(g, ctx);
  EXPECT_EQ(g.num_nodes(), 2u);
  EXPECT_EQ(neg->input(0), relu->output(0));
}

TEST(RemoveIdentity, DropsInferenceDropoutAndMakesAUsedMaskAllTrue) {
  ir::Graph g;
  ir::Value* x = testing::input(g, "x", f32({2}));
  ir::Node* relu = testing::onnx(g, "Relu", {x}, f32({2}));
  ir::Node* drop =
      g.add_node(ir::kOnnxDomain, "Dropout", {relu->output(0)}, {f32({2}), {ir::DType::Bool, ir::Shape::of({2})}});
  g.outputs = {drop->output(0), drop->output(1)};
  PassContext ctx;
  remove_identity(g, ctx);
  EXPECT_EQ(g.num_nodes(), 1u);
  EXPECT_EQ(g.outputs.at(0), relu->output(0));
  ASSERT_TRUE(g.outputs.at(1)->is_constant());
  const auto mask = g.outputs.at(1)->data().bytes();
  EXPECT_EQ(std::vector<uint8_t>(mask.begin(), mask.end()), (std::vector<uint8_t>{1, 1}));
}

TEST(RemoveIdentity, KeepsTrainingDropoutUnlessItsRatioIsZero) {
  for (float ratio : {0.5f, 0.0f}) {
    ir::Graph g;
    ir::Value* x = testing::input(g, "x", f32({2}));
    ir::Node* relu = testing::onnx(g, "Relu", {x}, f32({2}));
    ir::Value* training = g.add_constant("training", {ir::DType::Bool, ir::Shape::of({})}, ir::TensorData::owned({1}));
    ir::Node* drop = g.add_node(ir::kOnnxDomain, "Dropout",
                                {relu->output(0), testing::constant(g, "ratio", {}, {ratio}), training}, {f32({2})});
    g.outputs = {drop->output(0)};
    PassContext ctx;
    remove_identity(g, ctx);
    EXPECT_EQ(g.num_nodes(), ratio == 0.0f ? 1u : 2u) << ratio;
  }
}

TEST(EliminateDeadCode, RemovesUnusedChainsOnly) {
  ir::Graph g;
  ir::Value* x = testing::input(g, "x", f32({2}));
  ir::Node* used = testing::onnx(g, "Relu", {x}, f32({2}));
  ir::Node* dead1 = testing::onnx(g, "Neg", {x}, f32({2}));
  testing::onnx(g, "Abs", {dead1->output(0)}, f32({2}));
  g.outputs.push_back(used->output(0));
  PassContext ctx;
  eliminate_dead_code(g, ctx);
  EXPECT_EQ(g.num_nodes(), 1u);
}

// A 1x1 convolution of x [1, 1, 2, 2] with weight 2, no bias.
ir::Node* conv_1x1(ir::Graph& g, ir::Value* x) {
  return testing::runtime(g, "aten.convolution.default",
                          {x, testing::constant(g, "w", {1, 1, 1, 1}, {2}), nullptr}, {f32({1, 1, 2, 2})},
                          {{"stride", std::vector<int64_t>{1, 1}},
                           {"padding", std::vector<int64_t>{0, 0}},
                           {"dilation", std::vector<int64_t>{1, 1}},
                           {"transposed", false},
                           {"output_padding", std::vector<int64_t>{0, 0}},
                           {"groups", int64_t{1}}});
}

TEST(FuseConvClamp, ReluBecomesOpenUpperBound) {
  ir::Graph g;
  ir::Value* x = testing::input(g, "x", f32({1, 1, 2, 2}));
  ir::Node* conv = conv_1x1(g, x);
  ir::Node* relu = testing::runtime(g, "aten.relu.default", {conv->output(0)}, {f32({1, 1, 2, 2})});
  g.outputs.push_back(relu->output(0));
  PassContext ctx;
  fuse_conv_clamp(g, ctx);
  EXPECT_EQ(g.num_nodes(), 1u);
  EXPECT_EQ(conv->op_type(), "et_vk.conv_with_clamp.default");
  EXPECT_EQ(std::get<double>(*conv->attr("output_min")), 0.0);
  EXPECT_EQ(std::get<double>(*conv->attr("output_max")), DBL_MAX);
  EXPECT_EQ(g.outputs[0], conv->output(0));
}

TEST(FuseConvClamp, ClampKeepsItsBounds) {
  ir::Graph g;
  ir::Value* x = testing::input(g, "x", f32({1, 1, 2, 2}));
  ir::Node* conv = conv_1x1(g, x);
  ir::Node* clamp = testing::runtime(g, "aten.clamp.default", {conv->output(0)}, {f32({1, 1, 2, 2})}, {{"max", 6.0}});
  g.outputs.push_back(clamp->output(0));
  PassContext ctx;
  fuse_conv_clamp(g, ctx);
  EXPECT_EQ(std::get<double>(*conv->attr("output_min")), -DBL_MAX);
  EXPECT_EQ(std::get<double>(*conv->attr("output_max")), 6.0);
}

}  // namespace
}  // namespace vkc::passes
