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

// x [1, 3, 4] -> linear(x, W [5, 4]) -> add(., bias of `bias_shape`, alpha) -> output.
struct LinearAdd {
  ir::Graph g;
  ir::Node* linear = nullptr;
  ir::Node* add = nullptr;
  explicit LinearAdd(std::vector<int64_t> bias_shape, double alpha = 1.0, bool bias_first = false) {
    ir::Value* x = testing::input(g, "x", f32({1, 3, 4}));
    linear = testing::runtime(g, "aten.linear.default", {x, testing::constant(g, "w", {5, 4}, std::vector<float>(20, 0.5f)), nullptr},
                              {f32({1, 3, 5})});
    int64_t n = 1;
    for (int64_t d : bias_shape) n *= d;
    ir::Value* c = testing::constant(g, "c", bias_shape, std::vector<float>(static_cast<size_t>(n), 1.0f));
    add = testing::runtime(g, "aten.add.Tensor", bias_first ? std::vector<ir::Value*>{c, linear->output(0)}
                                                            : std::vector<ir::Value*>{linear->output(0), c},
                           {f32({1, 3, 5})}, {{"alpha", alpha}});
    g.outputs.push_back(add->output(0));
  }
};

TEST(FuseLinearBias, AConstantPerOutputAddBecomesTheLinearsBias) {
  for (const bool bias_first : {false, true}) {
    LinearAdd t({5}, 1.0, bias_first);
    ir::Value* out = t.add->output(0);
    PassContext ctx;
    fuse_linear_bias(t.g, ctx);
    ASSERT_EQ(t.g.num_nodes(), 1u);
    EXPECT_EQ(t.add->op_type(), "aten.linear.default");  // the add's node and output (its name) stay
    EXPECT_EQ(t.g.outputs[0], out);
    ASSERT_TRUE(t.add->input(2));
    EXPECT_EQ(t.add->input(2)->shape().sizes(), (std::vector<int64_t>{5}));
  }
  LinearAdd b({1, 1, 5});  // broadcast form: an [N] constant of the same values
  PassContext ctx;
  fuse_linear_bias(b.g, ctx);
  ASSERT_TRUE(b.add->input(2));
  EXPECT_EQ(b.add->op_type(), "aten.linear.default");
  EXPECT_EQ(b.add->input(2)->shape().sizes(), (std::vector<int64_t>{5}));
}

TEST(FuseLinearBias, OtherAddsStay) {
  for (const auto& [shape, alpha] : {std::pair{std::vector<int64_t>{3, 5}, 1.0}, {std::vector<int64_t>{5}, 2.0}}) {
    LinearAdd t(shape, alpha);  // a bias per row; alpha 2
    PassContext ctx;
    fuse_linear_bias(t.g, ctx);
    EXPECT_EQ(t.add->op_type(), "aten.add.Tensor");
    EXPECT_EQ(t.g.num_nodes(), 2u);
  }
  LinearAdd twice({5});  // the linear's output read elsewhere too
  ir::Node* relu = testing::runtime(twice.g, "aten.relu.default", {twice.linear->output(0)}, {f32({1, 3, 5})});
  twice.g.outputs.push_back(relu->output(0));
  PassContext ctx;
  fuse_linear_bias(twice.g, ctx);
  EXPECT_EQ(twice.add->op_type(), "aten.add.Tensor");
}

}  // namespace
}  // namespace vkc::passes
