#include <gtest/gtest.h>

#include <cmath>

#include "common/graph_builder.h"
#include "vkc/passes/passes.h"

namespace vkc::passes {
namespace {
using testing::f32;

// y = BN(conv(x)) computed directly for a 1x1 conv on a single pixel, channel o.
float reference(float x0, float x1, const std::vector<float>& w, float b, float s, float beta, float mean, float var,
                int o) {
  const float conv = w[o * 2] * x0 + w[o * 2 + 1] * x1 + b;
  return (conv - mean) / std::sqrt(var + 1e-3f) * s + beta;
}

TEST(FuseBatchNorm, FoldsIntoConvWeightsAndBias) {
  ir::Graph g;
  ir::Value* x = testing::input(g, "x", f32({1, 2, 1, 1}));
  const std::vector<float> w = {1, 2, 3, 4};
  ir::Node* conv = testing::onnx(g, "Conv", {x, testing::constant(g, "w", {2, 2, 1, 1}, w),
                                             testing::constant(g, "b", {2}, {0.5f, -1})},
                                 f32({1, 2, 1, 1}));
  ir::Node* bn = testing::onnx(g, "BatchNormalization",
                               {conv->output(0), testing::constant(g, "s", {2}, {2, 0.5f}),
                                testing::constant(g, "beta", {2}, {1, 0}), testing::constant(g, "m", {2}, {0.25f, 3}),
                                testing::constant(g, "v", {2}, {4, 1})},
                               f32({1, 2, 1, 1}), {{"epsilon", 1e-3}});
  g.outputs.push_back(bn->output(0));
  PassContext ctx;
  fuse_batch_norm(g, ctx);
  g.compact();

  ASSERT_EQ(g.num_nodes(), 1u);
  EXPECT_EQ(g.outputs[0], conv->output(0));
  auto fw = testing::floats(conv->input(1));
  auto fb = testing::floats(conv->input(2));
  const float x0 = 0.7f, x1 = -1.3f;
  EXPECT_NEAR(fw[0] * x0 + fw[1] * x1 + fb[0], reference(x0, x1, w, 0.5f, 2, 1, 0.25f, 4, 0), 1e-5);
  EXPECT_NEAR(fw[2] * x0 + fw[3] * x1 + fb[1], reference(x0, x1, w, -1, 0.5f, 0, 3, 1, 1), 1e-5);
}

TEST(FuseBatchNorm, LeavesBatchNormWhenConvOutputHasOtherUsers) {
  ir::Graph g;
  ir::Value* x = testing::input(g, "x", f32({1, 1, 1, 1}));
  ir::Node* conv = testing::onnx(g, "Conv", {x, testing::constant(g, "w", {1, 1, 1, 1}, {1})}, f32({1, 1, 1, 1}));
  auto c = [&](const char* n) { return testing::constant(g, n, {1}, {1}); };
  ir::Node* bn = testing::onnx(g, "BatchNormalization", {conv->output(0), c("s"), c("b"), c("m"), c("v")},
                               f32({1, 1, 1, 1}));
  g.outputs = {bn->output(0), conv->output(0)};
  PassContext ctx;
  fuse_batch_norm(g, ctx);
  EXPECT_EQ(g.num_nodes(), 2u);
}

TEST(FuseBatchNorm, LeavesBatchNormWithNonConstantParameters) {
  ir::Graph g;
  ir::Value* x = testing::input(g, "x", f32({1, 1, 1, 1}));
  ir::Value* scale = testing::input(g, "scale", f32({1}));
  ir::Node* conv = testing::onnx(g, "Conv", {x, testing::constant(g, "w", {1, 1, 1, 1}, {1})}, f32({1, 1, 1, 1}));
  auto c = [&](const char* n) { return testing::constant(g, n, {1}, {1}); };
  ir::Node* bn = testing::onnx(g, "BatchNormalization", {conv->output(0), scale, c("b"), c("m"), c("v")},
                               f32({1, 1, 1, 1}));
  g.outputs = {bn->output(0)};
  PassContext ctx;
  fuse_batch_norm(g, ctx);
  EXPECT_EQ(g.num_nodes(), 2u);
}

}  // namespace
}  // namespace vkc::passes
