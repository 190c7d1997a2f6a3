// Each ONNX operator of the first lowering, checked against the runtime operator it becomes.
#include <gtest/gtest.h>

#include "common/graph_builder.h"
#include "vkc/ir/verifier.h"
#include "vkc/passes/passes.h"

namespace vkc::passes {
namespace {
using testing::f32;
using Ints = std::vector<int64_t>;

struct Lowered {
  ir::Graph g;
  PassContext ctx;
  ir::Node* node = nullptr;

  void lower() {
    g.outputs = {node->output(0)};
    lower_to_vulkan(g, ctx);
    ASSERT_TRUE(ir::verify(g).empty()) << ir::verify(g).front();
  }
  const ir::Attribute& at(const char* k) const { return *node->attr(k); }
  std::string reason() const { return ctx.not_lowered.count(node->name()) ? ctx.not_lowered.at(node->name()) : ""; }
};

TEST(Lowering, ConvBecomesConvolutionWithAllArguments) {
  Lowered t;
  ir::Value* x = testing::input(t.g, "x", f32({1, 4, 8, 8}));
  ir::Value* w = testing::constant(t.g, "w", {8, 2, 3, 3}, std::vector<float>(8 * 2 * 9, 1.0f));
  t.node = testing::onnx(t.g, "Conv", {x, w}, f32({1, 8, 4, 4}),
                         {{"strides", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}, {"group", int64_t{2}},
                          {"dilations", Ints{1, 1}}});
  t.lower();
  EXPECT_EQ(t.node->op_type(), "aten.convolution.default");
  EXPECT_EQ(t.node->inputs(), (std::vector<ir::Value*>{x, w, nullptr}));
  EXPECT_EQ(std::get<Ints>(t.at("stride")), (Ints{2, 2}));
  EXPECT_EQ(std::get<Ints>(t.at("padding")), (Ints{1, 1}));
  EXPECT_EQ(std::get<Ints>(t.at("dilation")), (Ints{1, 1}));
  EXPECT_EQ(std::get<Ints>(t.at("output_padding")), (Ints{0, 0}));
  EXPECT_EQ(std::get<bool>(t.at("transposed")), false);
  EXPECT_EQ(std::get<int64_t>(t.at("groups")), 2);
}

TEST(Lowering, ConvSameUpperPaddingIsComputedFromTheInputShape) {
  Lowered t;
  ir::Value* x = testing::input(t.g, "x", f32({1, 1, 5, 5}));
  ir::Value* w = testing::constant(t.g, "w", {1, 1, 3, 3}, std::vector<float>(9, 1.0f));
  t.node = testing::onnx(t.g, "Conv", {x, w}, f32({1, 1, 5, 5}), {{"auto_pad", std::string("SAME_UPPER")}});
  t.lower();
  EXPECT_EQ(std::get<Ints>(t.at("padding")), (Ints{1, 1}));
}

TEST(Lowering, ConvWithAsymmetricPaddingGetsAnExplicitPadInFront) {
  Lowered t;
  ir::Value* x = testing::input(t.g, "x", f32({1, 1, 5, 5}));
  ir::Value* w = testing::constant(t.g, "w", {1, 1, 3, 3}, std::vector<float>(9, 1.0f));
  // begin (H, W) = (1, 0), end = (2, 1): the conv keeps (1, 0), the pad adds end-only (1, 1).
  t.node = testing::onnx(t.g, "Conv", {x, w}, f32({1, 1, 6, 4}), {{"pads", Ints{1, 0, 2, 1}}});
  t.lower();
  ASSERT_EQ(t.g.num_nodes(), 2u);
  const ir::Node* pad = t.g.nodes()[0];
  EXPECT_EQ(pad->op_type(), "aten.constant_pad_nd.default");
  EXPECT_EQ(std::get<Ints>(*pad->attr("pad")), (Ints{0, 1, 0, 1}));  // W (0, 1), H (0, 1)
  EXPECT_EQ(pad->output(0)->shape().str(), "[1,1,6,6]");
  EXPECT_EQ(t.node->input(0), pad->output(0));
  EXPECT_EQ(std::get<Ints>(t.at("padding")), (Ints{1, 0}));
}

TEST(Lowering, ConvWithBatchAboveOneIsOneConvolutionPerImage) {
  Lowered t;
  ir::Value* x = testing::input(t.g, "x", f32({2, 1, 4, 4}));
  ir::Value* w = testing::constant(t.g, "w", {1, 1, 1, 1}, {1});
  t.node = testing::onnx(t.g, "Conv", {x, w}, f32({2, 1, 4, 4}));
  t.lower();
  EXPECT_EQ(t.node->op_type(), "aten.cat.default");
  ASSERT_EQ(t.node->num_inputs(), 2u);
  for (size_t b = 0; b < 2; ++b) {
    const ir::Node* conv = t.node->input(b)->producer();
    ASSERT_EQ(conv->op_type(), "aten.convolution.default");
    const ir::Node* image = conv->input(0)->producer();
    ASSERT_EQ(image->op_type(), "aten.slice_copy.Tensor");
    EXPECT_EQ(std::get<int64_t>(*image->attr("start")), static_cast<int64_t>(b));
  }

  Lowered dynamic;  // a non-constant weight stays, with the reason
  dynamic.node = testing::onnx(dynamic.g, "Conv", {testing::input(dynamic.g, "x", f32({1, 1, 4, 4})),
                                                   testing::input(dynamic.g, "w", f32({1, 1, 1, 1}))},
                               f32({1, 1, 4, 4}));
  dynamic.lower();
  EXPECT_NE(dynamic.reason().find("weight is not a constant"), std::string::npos) << dynamic.reason();
}

TEST(Lowering, MaxPoolGetsExplicitStrideAndAnIndicesOutput) {
  Lowered t;
  ir::Value* x = testing::input(t.g, "x", f32({1, 2, 8, 8}));
  t.node = testing::onnx(t.g, "MaxPool", {x}, f32({1, 2, 4, 4}), {{"kernel_shape", Ints{2, 2}}});
  t.lower();
  EXPECT_EQ(t.node->op_type(), "aten.max_pool2d_with_indices.default");
  // ONNX strides default to 1; the runtime needs exactly two values (an empty list aborts it).
  EXPECT_EQ(std::get<Ints>(t.at("stride")), (Ints{1, 1}));
  EXPECT_EQ(std::get<Ints>(t.at("kernel_size")), (Ints{2, 2}));
  ASSERT_EQ(t.node->outputs().size(), 2u);
  EXPECT_EQ(t.node->output(1)->dtype(), ir::DType::Int64);
}

TEST(Lowering, AveragePoolExcludesPaddingLikeOnnx) {
  Lowered t;
  ir::Value* x = testing::input(t.g, "x", f32({1, 2, 8, 8}));
  t.node = testing::onnx(t.g, "AveragePool", {x}, f32({1, 2, 8, 8}),
                         {{"kernel_shape", Ints{3, 3}}, {"pads", Ints{1, 1, 1, 1}}});
  t.lower();
  EXPECT_EQ(t.node->op_type(), "aten.avg_pool2d.default");
  EXPECT_EQ(std::get<bool>(t.at("count_include_pad")), false);
  EXPECT_EQ(std::get<Ints>(t.at("padding")), (Ints{1, 1}));
}

TEST(Lowering, GlobalAveragePoolIsAMeanOverHeightAndWidth) {
  Lowered t;
  ir::Value* x = testing::input(t.g, "x", f32({1, 2, 8, 8}));
  t.node = testing::onnx(t.g, "GlobalAveragePool", {x}, f32({1, 2, 1, 1}));
  t.lower();
  EXPECT_EQ(t.node->op_type(), "aten.mean.dim");
  EXPECT_EQ(std::get<Ints>(t.at("dim")), (Ints{-1, -2}));
  EXPECT_EQ(std::get<bool>(t.at("keepdim")), true);
}

TEST(Lowering, BinaryAndUnaryOps) {
  const std::vector<std::pair<std::string, std::string>> binary = {
      {"Add", "aten.add.Tensor"}, {"Sub", "aten.sub.Tensor"}, {"Mul", "aten.mul.Tensor"}, {"Div", "aten.div.Tensor"}};
  for (const auto& [onnx_op, runtime_op] : binary) {
    Lowered t;
    ir::Value* a = testing::input(t.g, "a", f32({1, 4}));
    ir::Value* b = testing::input(t.g, "b", f32({1, 4}));
    t.node = testing::onnx(t.g, onnx_op, {a, b}, f32({1, 4}));
    t.lower();
    EXPECT_EQ(t.node->op_type(), runtime_op);
    EXPECT_EQ(t.node->inputs(), (std::vector<ir::Value*>{a, b}));
  }
  const std::vector<std::pair<std::string, std::string>> unary = {
      {"Relu", "aten.relu.default"}, {"Sigmoid", "aten.sigmoid.default"}, {"HardSwish", "aten.hardswish.default"}};
  for (const auto& [onnx_op, runtime_op] : unary) {
    Lowered t;
    t.node = testing::onnx(t.g, onnx_op, {testing::input(t.g, "a", f32({3}))}, f32({3}));
    t.lower();
    EXPECT_EQ(t.node->op_type(), runtime_op);
  }
}

TEST(Lowering, ClipBoundsFromInputsOrOldAttributes) {
  Lowered t;
  ir::Value* x = testing::input(t.g, "x", f32({4}));
  t.node = testing::onnx(t.g, "Clip", {x, testing::constant(t.g, "lo", {}, {0}), testing::constant(t.g, "hi", {}, {6})},
                         f32({4}), {}, 13);
  t.lower();
  EXPECT_EQ(t.node->op_type(), "aten.clamp.default");
  EXPECT_EQ(std::get<double>(t.at("min")), 0.0);
  EXPECT_EQ(std::get<double>(t.at("max")), 6.0);

  Lowered old;
  old.node = testing::onnx(old.g, "Clip", {testing::input(old.g, "x", f32({4}))}, f32({4}), {{"min", -1.0}}, 6);
  old.lower();
  EXPECT_EQ(std::get<double>(old.at("min")), -1.0);
  EXPECT_FALSE(old.node->has_attr("max"));

  // A computed lower bound: max(x, lo) = x + relu(lo - x) (the runtime has no maximum).
  Lowered dynamic;
  ir::Value* dx = testing::input(dynamic.g, "x", f32({4}));
  ir::Value* lo = testing::input(dynamic.g, "lo", f32({}));
  dynamic.node = testing::onnx(dynamic.g, "Clip", {dx, lo}, f32({4}), {}, 13);
  dynamic.lower();
  EXPECT_EQ(dynamic.node->op_type(), "aten.add.Tensor");
  EXPECT_EQ(dynamic.node->input(0), dx);
  const ir::Node* relu = dynamic.node->input(1)->producer();
  ASSERT_EQ(relu->op_type(), "aten.relu.default");
  EXPECT_EQ(relu->input(0)->producer()->op_type(), "aten.sub.Tensor");
  EXPECT_EQ(relu->input(0)->producer()->inputs(), (std::vector<ir::Value*>{lo, dx}));

  Lowered tensor_bound;  // a bound of more than one element is not Clip's
  tensor_bound.node = testing::onnx(tensor_bound.g, "Clip", {testing::input(tensor_bound.g, "x", f32({4})),
                                                             testing::input(tensor_bound.g, "lo", f32({4}))},
                                    f32({4}), {}, 13);
  tensor_bound.lower();
  EXPECT_NE(tensor_bound.reason().find("min bound is not a scalar"), std::string::npos);
}

TEST(Lowering, GemmFoldsTransposeAlphaAndBetaIntoLinearConstants) {
  Lowered t;
  ir::Value* a = testing::input(t.g, "a", f32({1, 2}));
  ir::Value* b = testing::constant(t.g, "b", {2, 3}, {1, 2, 3, 4, 5, 6});  // [K, N], transB = 0
  ir::Value* c = testing::constant(t.g, "c", {1, 3}, {1, 1, 1});
  t.node = testing::onnx(t.g, "Gemm", {a, b, c}, f32({1, 3}), {{"alpha", 2.0}, {"beta", 0.5}});
  t.lower();
  EXPECT_EQ(t.node->op_type(), "aten.linear.default");
  const ir::Value* w = t.node->input(1);
  EXPECT_EQ(w->shape().str(), "[3,2]");
  EXPECT_EQ(testing::floats(w), (std::vector<float>{2, 8, 4, 10, 6, 12}));
  EXPECT_EQ(testing::floats(t.node->input(2)), (std::vector<float>{0.5f, 0.5f, 0.5f}));
}

TEST(Lowering, GemmWithTransposedWeightUsesItDirectly) {
  Lowered t;
  ir::Value* a = testing::input(t.g, "a", f32({1, 2}));
  ir::Value* b = testing::constant(t.g, "b", {3, 2}, {1, 2, 3, 4, 5, 6});
  t.node = testing::onnx(t.g, "Gemm", {a, b}, f32({1, 3}), {{"transB", int64_t{1}}});
  t.lower();
  EXPECT_EQ(t.node->input(1), b);
  EXPECT_EQ(t.node->input(2), nullptr);
}

TEST(Lowering, MatMulVariants) {
  Lowered linear;
  ir::Value* a = testing::input(linear.g, "a", f32({1, 5, 2}));
  linear.node = testing::onnx(linear.g, "MatMul", {a, testing::constant(linear.g, "w", {2, 3}, {1, 2, 3, 4, 5, 6})},
                              f32({1, 5, 3}));
  linear.lower();
  EXPECT_EQ(linear.node->op_type(), "aten.linear.default");
  // [K, N] reaches linear's [N, K] through a permute of the constant, folded after quantize-weights.
  const ir::Node* t = linear.node->input(1)->producer();
  ASSERT_EQ(t->op_type(), "aten.permute_copy.default");
  EXPECT_EQ(t->output(0)->shape().sizes(), (Ints{3, 2}));
  PassContext ctx;
  fold_weight_transposes(linear.g, ctx);
  EXPECT_EQ(testing::floats(linear.node->input(1)), (std::vector<float>{1, 4, 2, 5, 3, 6}));

  Lowered mm;
  mm.node = testing::onnx(mm.g, "MatMul", {testing::input(mm.g, "a", f32({4, 2})), testing::input(mm.g, "b", f32({2, 3}))},
                          f32({4, 3}));
  mm.lower();
  EXPECT_EQ(mm.node->op_type(), "aten.mm.default");

  Lowered bmm;
  bmm.node = testing::onnx(bmm.g, "MatMul",
                           {testing::input(bmm.g, "a", f32({2, 4, 2})), testing::input(bmm.g, "b", f32({2, 2, 3}))},
                           f32({2, 4, 3}));
  bmm.lower();
  EXPECT_EQ(bmm.node->op_type(), "aten.bmm.default");

  Lowered four_d;
  four_d.node = testing::onnx(four_d.g, "MatMul",
                              {testing::input(four_d.g, "a", f32({1, 2, 4, 2})), testing::input(four_d.g, "b", f32({1, 2, 2, 3}))},
                              f32({1, 2, 4, 3}));
  four_d.lower();  // attention: flatten the batch dims, bmm, restore
  ASSERT_EQ(four_d.g.num_nodes(), 4u);
  EXPECT_EQ(four_d.g.nodes()[2]->op_type(), "aten.bmm.default");
  EXPECT_EQ(four_d.g.nodes()[2]->output(0)->shape().str(), "[2,4,3]");
  EXPECT_EQ(four_d.node->op_type(), "aten.view_copy.default");
  EXPECT_EQ(std::get<Ints>(four_d.at("size")), (Ints{1, 2, 4, 3}));

  Lowered bcast;
  bcast.node = testing::onnx(bcast.g, "MatMul",
                             {testing::input(bcast.g, "a", f32({1, 2, 4, 2})), testing::input(bcast.g, "b", f32({1, 1, 2, 3}))},
                             f32({1, 2, 4, 3}));
  bcast.lower();  // b's size-1 head dim is expanded to 2 before the bmm
  const ir::Node* product = bcast.node->input(0)->producer();
  ASSERT_EQ(product->op_type(), "aten.bmm.default");
  const ir::Node* b3 = product->input(1)->producer();  // view of the expansion
  ASSERT_EQ(b3->op_type(), "aten.view_copy.default");
  EXPECT_EQ(b3->input(0)->producer()->op_type(), "aten.expand_copy.default");
  EXPECT_EQ(b3->input(0)->shape().sizes(), (Ints{1, 2, 2, 3}));

  Lowered rows;  // [..., K] x a non-constant [K, N]: one mm over the flattened rows
  rows.node = testing::onnx(rows.g, "MatMul",
                            {testing::input(rows.g, "a", f32({2, 3, 4})), testing::input(rows.g, "b", f32({4, 5}))},
                            f32({2, 3, 5}));
  rows.lower();
  EXPECT_EQ(rows.node->op_type(), "aten.view_copy.default");
  ASSERT_EQ(rows.node->input(0)->producer()->op_type(), "aten.mm.default");
  EXPECT_EQ(rows.node->input(0)->shape().sizes(), (Ints{6, 5}));
}

TEST(Lowering, ReshapeAndFlattenBecomeViewCopyWithTheStaticOutputShape) {
  for (const char* op : {"Reshape", "Flatten"}) {
    Lowered t;
    ir::Value* x = testing::input(t.g, "x", f32({1, 2, 3, 4}));
    std::vector<ir::Value*> ins = {x};
    if (std::string(op) == "Reshape") ins.push_back(testing::constant_i64(t.g, "s", {1, -1}));
    t.node = testing::onnx(t.g, op, ins, f32({1, 24}));
    t.lower();
    EXPECT_EQ(t.node->op_type(), "aten.view_copy.default");
    EXPECT_EQ(t.node->inputs(), std::vector<ir::Value*>{x});
    EXPECT_EQ(std::get<Ints>(t.at("size")), (Ints{1, 24}));
  }
}

TEST(Lowering, ConcatNormalizesTheAxis) {
  Lowered t;
  ir::Value* a = testing::input(t.g, "a", f32({1, 2, 4}));
  ir::Value* b = testing::input(t.g, "b", f32({1, 3, 4}));
  t.node = testing::onnx(t.g, "Concat", {a, b}, f32({1, 5, 4}), {{"axis", int64_t{-2}}});
  t.lower();
  EXPECT_EQ(t.node->op_type(), "aten.cat.default");
  EXPECT_EQ(std::get<int64_t>(t.at("dim")), 1);
  EXPECT_EQ(t.node->num_inputs(), 2u);
}

TEST(Lowering, SoftmaxAxisAndOpsetSemantics) {
  Lowered t;
  t.node = testing::onnx(t.g, "Softmax", {testing::input(t.g, "x", f32({2, 3, 4}))}, f32({2, 3, 4}), {}, 13);
  t.lower();
  EXPECT_EQ(t.node->op_type(), "aten._softmax.default");
  EXPECT_EQ(std::get<int64_t>(t.at("dim")), 2);
  EXPECT_EQ(std::get<bool>(t.at("half_to_float")), false);

  // Opset 11 flattens at axis=1 (its default): a view to [2, 12], a softmax over dim 1, a view back.
  Lowered old;
  old.node = testing::onnx(old.g, "Softmax", {testing::input(old.g, "x", f32({2, 3, 4}))}, f32({2, 3, 4}), {}, 11);
  old.lower();
  EXPECT_EQ(old.node->op_type(), "aten.view_copy.default");
  EXPECT_EQ(std::get<Ints>(old.at("size")), (Ints{2, 3, 4}));
  const ir::Node* rows = old.node->input(0)->producer();
  ASSERT_TRUE(rows && rows->op_type() == "aten._softmax.default");
  EXPECT_EQ(std::get<int64_t>(*rows->attr("dim")), 1);
  EXPECT_EQ(rows->output(0)->shape().sizes(), (Ints{2, 12}));
  EXPECT_EQ(rows->input(0)->producer()->op_type(), "aten.view_copy.default");
}

TEST(Lowering, ConvTransposeIsATransposedConvolution) {
  Lowered t;
  ir::Value* x = testing::input(t.g, "x", f32({1, 4, 8, 8}));
  ir::Value* w = testing::constant(t.g, "w", {4, 2, 2, 2}, std::vector<float>(32, 1.0f));
  t.node = testing::onnx(t.g, "ConvTranspose", {x, w}, f32({1, 2, 16, 16}),
                         {{"strides", Ints{2, 2}}, {"kernel_shape", Ints{2, 2}}});
  t.lower();
  EXPECT_EQ(t.node->op_type(), "aten.convolution.default");
  EXPECT_EQ(std::get<bool>(t.at("transposed")), true);
  EXPECT_EQ(std::get<Ints>(t.at("stride")), (Ints{2, 2}));
  EXPECT_EQ(std::get<Ints>(t.at("output_padding")), (Ints{0, 0}));

  Lowered shaped;
  shaped.node = testing::onnx(shaped.g, "ConvTranspose",
                              {testing::input(shaped.g, "x", f32({1, 4, 8, 8})),
                               testing::constant(shaped.g, "w", {4, 2, 2, 2}, std::vector<float>(32, 1.0f))},
                              f32({1, 2, 16, 16}), {{"output_shape", Ints{16, 16}}});
  shaped.lower();
  EXPECT_NE(shaped.reason().find("output_shape"), std::string::npos);
}

TEST(Lowering, HardSigmoidWithTorchConstantsIsTheRuntimeOp) {
  Lowered t;
  ir::Value* x = testing::input(t.g, "x", f32({1, 4}));
  t.node = testing::onnx(t.g, "HardSigmoid", {x}, f32({1, 4}), {{"alpha", 1.0 / 6.0}, {"beta", 0.5}});
  t.lower();
  EXPECT_EQ(t.node->op_type(), "aten.hardsigmoid.default");
  EXPECT_EQ(t.node->input(0), x);
  EXPECT_EQ(t.g.num_nodes(), 1u);
}

TEST(Lowering, HardSigmoidWithOtherAlphaScalesItsInputFirst) {
  Lowered t;
  ir::Value* x = testing::input(t.g, "x", f32({1, 4}));
  t.node = testing::onnx(t.g, "HardSigmoid", {x}, f32({1, 4}), {{"alpha", 0.2}, {"beta", 0.5}});
  t.lower();
  ASSERT_EQ(t.g.num_nodes(), 2u);
  const ir::Node* mul = t.g.nodes()[0];
  EXPECT_EQ(mul->op_type(), "aten.mul.Tensor");
  EXPECT_NEAR(testing::floats(mul->input(1))[0], 1.2f, 1e-6);  // clamp(0.2x + 0.5) = hardsigmoid(1.2x)
  EXPECT_EQ(t.node->input(0), mul->output(0));

  Lowered general;
  general.node = testing::onnx(general.g, "HardSigmoid", {testing::input(general.g, "x", f32({2}))}, f32({2}),
                               {{"alpha", 0.5}, {"beta", 0.25}});
  general.lower();
  ASSERT_EQ(general.g.num_nodes(), 3u);
  EXPECT_EQ(general.node->op_type(), "aten.clamp.default");
  EXPECT_EQ(std::get<double>(general.at("min")), 0.0);
  EXPECT_EQ(std::get<double>(general.at("max")), 1.0);
}

TEST(Lowering, StandaloneBatchNormKeepsConstantsAndAddsTheTwoUnusedOutputs) {
  Lowered t;
  ir::Value* x = testing::input(t.g, "x", f32({1, 2, 4, 4}));
  auto c = [&](const char* n) { return testing::constant(t.g, n, {2}, {1, 2}); };
  t.node = testing::onnx(t.g, "BatchNormalization", {x, c("s"), c("b"), c("m"), c("v")}, f32({1, 2, 4, 4}),
                         {{"epsilon", 1e-3}});
  t.lower();
  EXPECT_EQ(t.node->op_type(), "aten._native_batch_norm_legit_no_training.default");
  EXPECT_EQ(t.node->num_inputs(), 5u);
  EXPECT_EQ(std::get<double>(t.at("eps")), 1e-3);
  ASSERT_EQ(t.node->outputs().size(), 3u);
  EXPECT_EQ(t.node->output(1)->shape().str(), "[0]");
}

TEST(Lowering, ResizeNearestAsymmetricFloorIsUpsampleNearest) {
  Lowered t;
  ir::Value* x = testing::input(t.g, "x", f32({1, 2, 4, 4}));
  ir::Value* roi = testing::constant(t.g, "roi", {0}, {});
  ir::Value* scales = testing::constant(t.g, "scales", {4}, {1, 1, 2, 2});
  t.node = testing::onnx(t.g, "Resize", {x, roi, scales}, f32({1, 2, 8, 8}),
                         {{"mode", std::string("nearest")},
                          {"coordinate_transformation_mode", std::string("asymmetric")},
                          {"nearest_mode", std::string("floor")}},
                         11);
  t.lower();
  EXPECT_EQ(t.node->op_type(), "aten.upsample_nearest2d.vec");
  EXPECT_EQ(t.node->inputs(), std::vector<ir::Value*>{x});
  EXPECT_EQ(std::get<std::vector<double>>(t.at("scale_factors")), (std::vector<double>{2, 2}));
  EXPECT_FALSE(t.node->has_attr("output_size"));
}

TEST(Lowering, ResizeLinearWithSizesIsBilinear) {
  Lowered t;
  ir::Value* x = testing::input(t.g, "x", f32({1, 2, 4, 4}));
  t.node = testing::onnx(t.g, "Resize", {x, nullptr, nullptr, testing::constant_i64(t.g, "sizes", {1, 2, 6, 10})},
                         f32({1, 2, 6, 10}),
                         {{"mode", std::string("linear")}, {"coordinate_transformation_mode", std::string("align_corners")}},
                         13);
  t.lower();
  EXPECT_EQ(t.node->op_type(), "aten.upsample_bilinear2d.vec");
  EXPECT_EQ(std::get<Ints>(t.at("output_size")), (Ints{6, 10}));
  EXPECT_EQ(std::get<bool>(t.at("align_corners")), true);
}

TEST(Lowering, LinearResizeToAFractionalSizeIsSeparableLinearSteps) {
  // 4 * 0.6 = 2.4 with align_corners: ONNX and aten map coordinates differently, so each axis
  // becomes linear(x, W [2, 4]); H is moved last and back around its step.
  Lowered frac;
  ir::Value* x = testing::input(frac.g, "x", f32({1, 1, 4, 4}));
  frac.node = testing::onnx(frac.g, "Resize", {x, nullptr, testing::constant(frac.g, "scales", {4}, {1, 1, 0.6f, 0.6f})},
                            f32({1, 1, 2, 2}),
                            {{"mode", std::string("linear")}, {"coordinate_transformation_mode", std::string("align_corners")}},
                            13);
  frac.lower();
  std::vector<std::string> ops;
  for (const ir::Node* m : frac.g.nodes()) ops.push_back(m->op_type());
  EXPECT_EQ(ops, (std::vector<std::string>{"aten.permute_copy.default", "aten.linear.default", "aten.permute_copy.default",
                                           "aten.linear.default"}));
  EXPECT_EQ(frac.node->op_type(), "aten.linear.default");
  // align_corners over an unrounded length of 2.4: output 1 reads input 1 / 1.4 * 3 = 2.142857
  const std::vector<float> w = testing::floats(frac.node->input(1));
  ASSERT_EQ(w.size(), 8u);
  EXPECT_EQ((std::vector<float>(w.begin(), w.begin() + 4)), (std::vector<float>{1, 0, 0, 0}));
  EXPECT_NEAR(w[6], 1 - (3 / 1.4 - 2), 1e-6);
  EXPECT_NEAR(w[7], 3 / 1.4 - 2, 1e-6);
}

TEST(Lowering, GridSampleIsGridSampler2dWithModeNumbers) {
  Lowered t;
  ir::Value* x = testing::input(t.g, "x", f32({1, 2, 4, 4}));
  ir::Value* grid = testing::input(t.g, "grid", f32({1, 3, 5, 2}));
  t.node = testing::onnx(t.g, "GridSample", {x, grid}, f32({1, 2, 3, 5}),
                         {{"mode", std::string("nearest")}, {"padding_mode", std::string("reflection")},
                          {"align_corners", int64_t{1}}},
                         16);
  t.lower();
  EXPECT_EQ(t.node->op_type(), "aten.grid_sampler_2d.default");
  EXPECT_EQ(t.node->inputs(), (std::vector<ir::Value*>{x, grid}));
  EXPECT_EQ(std::get<int64_t>(t.at("interpolation_mode")), 1);
  EXPECT_EQ(std::get<int64_t>(t.at("padding_mode")), 2);
  EXPECT_EQ(std::get<bool>(t.at("align_corners")), true);

  Lowered cubic;
  cubic.node = testing::onnx(cubic.g, "GridSample",
                             {testing::input(cubic.g, "x", f32({1, 1, 2, 2})), testing::input(cubic.g, "g", f32({1, 1, 1, 2}))},
                             f32({1, 1, 1, 1}), {{"mode", std::string("bicubic")}}, 16);
  cubic.lower();
  EXPECT_NE(cubic.reason().find("'bicubic' is not supported"), std::string::npos) << cubic.reason();
}

TEST(Lowering, GemmWithAOneElementBiasExpandsIt) {
  Lowered t;
  t.node = testing::onnx(t.g, "Gemm",
                         {testing::input(t.g, "a", f32({1, 2})), testing::constant(t.g, "b", {3, 2}, {1, 2, 3, 4, 5, 6}),
                          testing::constant(t.g, "c", {1}, {7})},
                         f32({1, 3}), {{"transB", int64_t{1}}});
  t.lower();
  EXPECT_EQ(testing::floats(t.node->input(2)), (std::vector<float>{7, 7, 7}));
}

TEST(Lowering, NearestResizeWithOtherRoundingIsIndexSelectPerAxis) {
  // half_pixel / round_prefer_floor doubling: output j reads input round((j + 0.5) / 2 - 0.5)
  // (j = 0: -0.25 rounds to 0)
  Lowered t;
  ir::Value* x = testing::input(t.g, "x", f32({1, 2, 4, 4}));
  t.node = testing::onnx(t.g, "Resize", {x, nullptr, testing::constant(t.g, "scales", {4}, {1, 1, 2, 2})},
                         f32({1, 2, 8, 8}), {{"mode", std::string("nearest")}}, 13);
  t.lower();
  ASSERT_EQ(t.g.num_nodes(), 2u);
  EXPECT_EQ(t.g.nodes()[0]->op_type(), "aten.index_select.default");
  EXPECT_EQ(std::get<int64_t>(t.g.nodes()[0]->attrs().at("dim")), 2);
  EXPECT_EQ(t.node->op_type(), "aten.index_select.default");
  EXPECT_EQ(std::get<int64_t>(t.at("dim")), 3);
  EXPECT_EQ(testing::ints(t.node->input(1)), (Ints{0, 0, 1, 1, 2, 2, 3, 3}));

  Lowered crop;  // tf_crop_and_resize reads a region of interest: left with both reasons
  crop.node = testing::onnx(crop.g, "Resize",
                            {testing::input(crop.g, "x", f32({1, 1, 4, 4})), testing::constant(crop.g, "roi", {8}, {0, 0, 0.4f, 0.6f, 1, 1, 0.6f, 0.8f}),
                             nullptr, testing::constant_i64(crop.g, "sizes", {1, 1, 3, 3})},
                            f32({1, 1, 3, 3}),
                            {{"mode", std::string("linear")},
                             {"coordinate_transformation_mode", std::string("tf_crop_and_resize")}},
                            13);
  crop.lower();
  EXPECT_NE(crop.reason().find("tf_crop_and_resize is not supported"), std::string::npos) << crop.reason();
}

TEST(Lowering, UnaryMathMapsToRuntimeOpsOrShortChains) {
  for (const auto& [onnx_op, runtime_op] : std::vector<std::pair<std::string, std::string>>{
           {"Tanh", "aten.tanh.default"}, {"Sqrt", "aten.sqrt.default"}, {"Exp", "aten.exp.default"},
           {"Neg", "aten.neg.default"}, {"Abs", "aten.abs.default"}, {"Reciprocal", "aten.pow.Tensor_Scalar"}}) {
    Lowered t;
    t.node = testing::onnx(t.g, onnx_op, {testing::input(t.g, "x", f32({4}))}, f32({4}));
    t.lower();
    EXPECT_EQ(t.node->op_type(), runtime_op) << onnx_op;
  }
  Lowered log;  // log10(x) * ln(10)
  log.node = testing::onnx(log.g, "Log", {testing::input(log.g, "x", f32({4}))}, f32({4}));
  log.lower();
  ASSERT_EQ(log.g.num_nodes(), 2u);
  EXPECT_EQ(log.g.nodes()[0]->op_type(), "aten.log10.default");
  EXPECT_EQ(log.node->op_type(), "aten.mul.Tensor");
  EXPECT_NEAR(testing::floats(log.node->input(1))[0], 2.302585f, 1e-6);
}

TEST(Lowering, PowWithAConstantExponent) {
  Lowered half;
  half.node = testing::onnx(half.g, "Pow", {testing::input(half.g, "x", f32({4})), testing::constant(half.g, "e", {}, {0.5f})},
                            f32({4}));
  half.lower();
  EXPECT_EQ(half.node->op_type(), "aten.sqrt.default");
  Lowered sq;
  sq.node = testing::onnx(sq.g, "Pow", {testing::input(sq.g, "x", f32({4})), testing::constant(sq.g, "e", {}, {2})},
                          f32({4}));
  sq.lower();
  EXPECT_EQ(sq.node->op_type(), "aten.pow.Tensor_Scalar");
  EXPECT_EQ(std::get<double>(sq.at("exponent")), 2.0);
}

TEST(Lowering, MaxWithAScalarIsAClampAndOtherwiseAddReluSub) {
  Lowered c;
  ir::Value* x = testing::input(c.g, "x", f32({1, 4}));
  c.node = testing::onnx(c.g, "Max", {x, testing::constant(c.g, "zero", {}, {0.25f})}, f32({1, 4}));
  c.lower();
  EXPECT_EQ(c.node->op_type(), "aten.clamp.default");
  EXPECT_EQ(std::get<double>(c.at("min")), 0.25);

  Lowered g;
  ir::Value* a = testing::input(g.g, "a", f32({1, 4}));
  ir::Value* b = testing::input(g.g, "b", f32({1, 4}));
  g.node = testing::onnx(g.g, "Max", {a, b}, f32({1, 4}));
  g.lower();
  ASSERT_EQ(g.g.num_nodes(), 3u);  // a + relu(b - a)
  EXPECT_EQ(g.g.nodes()[0]->op_type(), "aten.sub.Tensor");
  EXPECT_EQ(g.g.nodes()[0]->inputs(), (std::vector<ir::Value*>{b, a}));
  EXPECT_EQ(g.g.nodes()[1]->op_type(), "aten.relu.default");
  EXPECT_EQ(g.node->op_type(), "aten.add.Tensor");

  Lowered m;
  m.node = testing::onnx(m.g, "Min", {testing::input(m.g, "a", f32({2})), testing::input(m.g, "b", f32({2}))}, f32({2}));
  m.lower();
  EXPECT_EQ(m.node->op_type(), "aten.minimum.default");
}

TEST(Lowering, ReductionsCarryAxesAndKeepdim) {
  Lowered t;
  t.node = testing::onnx(t.g, "ReduceMean", {testing::input(t.g, "x", f32({1, 8, 16}))}, f32({1, 8, 1}),
                         {{"axes", Ints{-1}}});
  t.lower();
  EXPECT_EQ(t.node->op_type(), "aten.mean.dim");
  EXPECT_EQ(std::get<Ints>(t.at("dim")), Ints{2});
  EXPECT_EQ(std::get<bool>(t.at("keepdim")), true);

  Lowered s;  // opset 18: axes as an input
  s.node = testing::onnx(s.g, "ReduceMax", {testing::input(s.g, "x", f32({2, 3})), testing::constant_i64(s.g, "axes", {0})},
                         f32({3}), {{"keepdims", int64_t{0}}}, 18);
  s.lower();  // keepdims 0: the reduction keeps the dim (texture representations exist) and a view drops it
  EXPECT_EQ(s.node->op_type(), "aten.view_copy.default");
  const ir::Node* amax = s.node->input(0)->producer();
  ASSERT_EQ(amax->op_type(), "aten.amax.default");
  EXPECT_EQ(std::get<Ints>(*amax->attr("dim")), Ints{0});
  EXPECT_EQ(std::get<bool>(*amax->attr("keepdim")), true);
  EXPECT_EQ(amax->output(0)->shape().sizes(), (Ints{1, 3}));
}

TEST(Lowering, ReductionsOverSeveralAxesBecomeAChainOfOneAxisReductions) {
  // All axes without keepdims (e.g. the global max of a spectrogram): amax per axis, then a view.
  Lowered t;
  ir::Value* x = testing::input(t.g, "x", f32({1, 2, 3, 4}));
  t.node = testing::onnx(t.g, "ReduceMax", {x}, f32({}), {{"keepdims", int64_t{0}}});
  t.lower();
  EXPECT_EQ(t.node->op_type(), "aten.view_copy.default");
  std::vector<int64_t> dims;
  ir::Value* v = t.node->input(0);
  for (ir::Node* r = v->producer(); r; r = r->input(0)->producer()) {
    EXPECT_EQ(r->op_type(), "aten.amax.default");
    EXPECT_EQ(std::get<bool>(*r->attr("keepdim")), true);
    dims.push_back(std::get<Ints>(*r->attr("dim")).at(0));
  }
  EXPECT_EQ(dims, (Ints{3, 2, 1}));  // walked back from the last; the size-1 batch needs none
  EXPECT_EQ(v->shape().sizes(), (Ints{1, 1, 1, 1}));
}

TEST(Lowering, AReductionOverTheBatchIsTheMiddleDimOfA3DView) {
  // ET-VK reduces along the dims its textures lay out as x, y and z only (not N of a 4-D tensor,
  // nor C when N > 1): those become [before, axis, after] views reduced along dim 1.
  for (const int64_t axis : {0, 1}) {
    Lowered t;
    ir::Value* x = testing::input(t.g, "x", f32({2, 3, 4, 5}));
    auto out = Ints{2, 3, 4, 5};
    out[axis] = 1;
    t.node = testing::onnx(t.g, "ReduceSum", {x, testing::constant_i64(t.g, "axes", {axis})}, f32(out), {}, 13);
    t.lower();
    EXPECT_EQ(t.node->op_type(), "aten.view_copy.default");
    const ir::Node* r = t.node->input(0)->producer();
    ASSERT_TRUE(r);
    EXPECT_EQ(r->op_type(), "aten.sum.dim_IntList");
    EXPECT_EQ(std::get<Ints>(*r->attr("dim")), (Ints{1}));
    EXPECT_EQ(r->input(0)->shape().sizes(), axis == 0 ? (Ints{1, 2, 60}) : (Ints{2, 3, 20}));
    EXPECT_EQ(r->input(0)->producer()->op_type(), "aten.view_copy.default");
  }
}

TEST(Lowering, TransposeSliceSplitPad) {
  Lowered tr;
  tr.node = testing::onnx(tr.g, "Transpose", {testing::input(tr.g, "x", f32({1, 2, 3}))}, f32({3, 2, 1}));
  tr.lower();
  EXPECT_EQ(tr.node->op_type(), "aten.permute_copy.default");
  EXPECT_EQ(std::get<Ints>(tr.at("dims")), (Ints{2, 1, 0}));

  Lowered sl;  // two sliced axes -> two slice_copy; INT64_MAX end clamps
  ir::Value* x = testing::input(sl.g, "x", f32({4, 6, 8}));
  sl.node = testing::onnx(sl.g, "Slice",
                          {x, testing::constant_i64(sl.g, "s", {1, -4}), testing::constant_i64(sl.g, "e", {INT64_MAX, 8}),
                           testing::constant_i64(sl.g, "a", {0, 2}), testing::constant_i64(sl.g, "st", {2, 1})},
                          f32({2, 6, 4}), {}, 13);
  sl.lower();
  ASSERT_EQ(sl.g.num_nodes(), 2u);
  const ir::Node* first = sl.g.nodes()[0];
  EXPECT_EQ(std::get<int64_t>(*first->attr("dim")), 0);
  EXPECT_EQ(std::get<int64_t>(*first->attr("start")), 1);
  EXPECT_EQ(std::get<int64_t>(*first->attr("end")), 4);
  EXPECT_EQ(std::get<int64_t>(*first->attr("step")), 2);
  EXPECT_EQ(first->output(0)->shape().str(), "[2,6,8]");
  EXPECT_EQ(std::get<int64_t>(sl.at("dim")), 2);
  EXPECT_EQ(std::get<int64_t>(sl.at("start")), 4);

  Lowered sp;
  ir::Node* split = sp.g.add_node(ir::kOnnxDomain, "Split", {testing::input(sp.g, "x", f32({1, 6}))},
                                  {f32({1, 2}), f32({1, 4})});
  split->attrs() = {{"axis", int64_t{1}}};
  split->set_opset(13);
  sp.node = split;
  sp.g.outputs = {split->output(0), split->output(1)};
  lower_to_vulkan(sp.g, sp.ctx);
  EXPECT_EQ(split->op_type(), "aten.split_with_sizes_copy.default");
  EXPECT_EQ(std::get<Ints>(*split->attr("split_sizes")), (Ints{2, 4}));

  Lowered pad;  // ONNX [b0,b1,b2,b3,e0,e1,e2,e3] -> torch [b3,e3,b2,e2]
  pad.node = testing::onnx(pad.g, "Pad",
                           {testing::input(pad.g, "x", f32({1, 2, 4, 4})),
                            testing::constant_i64(pad.g, "p", {0, 0, 1, 2, 0, 0, 3, 4})},
                           f32({1, 2, 8, 10}), {}, 13);
  pad.lower();
  EXPECT_EQ(pad.node->op_type(), "aten.constant_pad_nd.default");
  EXPECT_EQ(std::get<Ints>(pad.at("pad")), (Ints{2, 4, 1, 3}));
}

TEST(Lowering, CastWhereComparisonsAndLogic) {
  Lowered cast;
  cast.node = testing::onnx(cast.g, "Cast", {testing::input(cast.g, "x", f32({4}))},
                            {ir::DType::Int32, ir::Shape::of({4})}, {{"to", int64_t{6}}});
  cast.lower();
  EXPECT_EQ(cast.node->op_type(), "aten._to_copy.default");
  EXPECT_EQ(cast.node->output(0)->dtype(), ir::DType::Int32);

  Lowered cmp;
  ir::Value* a = testing::input(cmp.g, "a", f32({4}));
  ir::Value* b = testing::input(cmp.g, "b", f32({4}));
  ir::Node* lt = testing::onnx(cmp.g, "Less", {a, b}, {ir::DType::Bool, ir::Shape::of({4})});
  cmp.node = testing::onnx(cmp.g, "Where", {lt->output(0), a, b}, f32({4}));
  cmp.lower();
  EXPECT_EQ(lt->op_type(), "aten.lt.Tensor");
  EXPECT_EQ(cmp.node->op_type(), "aten.where.self");
  EXPECT_EQ(cmp.node->inputs(), (std::vector<ir::Value*>{lt->output(0), a, b}));
}

TEST(Lowering, AnIntegerWhereIsArithmetic) {
  // ExecuTorch's runtime has where for float and half only: b + (a - b) * int(condition), the
  // difference in a and b's own broadcast shape ([3] here, the output [2, 3]).
  Lowered t;
  const ir::TensorType ints{ir::DType::Int64, ir::Shape::of({2, 3})};
  ir::Value* c = testing::input(t.g, "c", ir::TensorType{ir::DType::Bool, ir::Shape::of({2, 3})});
  ir::Value* a = testing::input(t.g, "a", ir::TensorType{ir::DType::Int64, ir::Shape::of({3})});
  ir::Value* b = testing::input(t.g, "b", ir::TensorType{ir::DType::Int64, ir::Shape::of({1})});
  t.node = testing::onnx(t.g, "Where", {c, a, b}, ints);
  t.lower();
  EXPECT_EQ(t.node->op_type(), "aten.add.Tensor");
  ASSERT_EQ(t.node->input(1), b);
  const ir::Node* mul = t.node->input(0)->producer();
  ASSERT_TRUE(mul && mul->op_type() == "aten.mul.Tensor");
  const ir::Node* diff = mul->input(0)->producer();
  const ir::Node* mask = mul->input(1)->producer();
  ASSERT_TRUE(diff && mask);
  EXPECT_EQ(diff->op_type(), "aten.sub.Tensor");
  EXPECT_EQ(diff->inputs(), (std::vector<ir::Value*>{a, b}));
  EXPECT_EQ(diff->output(0)->shape(), ir::Shape::of({3}));
  EXPECT_EQ(mask->op_type(), "aten._to_copy.default");
  EXPECT_EQ(mask->input(0), c);
  EXPECT_EQ(mask->output(0)->dtype(), ir::DType::Int64);
}

TEST(Lowering, ACastToBoolIsNotEqualToZero) {
  // ExecuTorch's runtime converts into no bool dtype (view_convert only from it).
  for (const ir::DType from : {ir::DType::Int64, ir::DType::Int32, ir::DType::Float32}) {
    Lowered t;
    ir::Value* x = testing::input(t.g, "x", ir::TensorType{from, ir::Shape::of({2, 3})});
    t.node = testing::onnx(t.g, "Cast", {x}, ir::TensorType{ir::DType::Bool, ir::Shape::of({2, 3})});
    t.lower();
    EXPECT_EQ(t.node->op_type(), "aten.ne.Scalar") << ir::dtype_name(from);
    EXPECT_EQ(std::get<int64_t>(t.at("other")), 0);
  }
  Lowered back;  // from bool: a conversion
  back.node = testing::onnx(back.g, "Cast", {testing::input(back.g, "b", ir::TensorType{ir::DType::Bool, ir::Shape::of({4})})},
                            f32({4}));
  back.lower();
  EXPECT_EQ(back.node->op_type(), "aten._to_copy.default");
}

TEST(Lowering, AnIntegerComparisonWithOneNumberIsTheScalarForm) {
  // ExecuTorch's runtime finds its int32 .Scalar comparison kernels, not its .Tensor ones.
  const ir::TensorType ints{ir::DType::Int64, ir::Shape::of({2, 3})}, bools{ir::DType::Bool, ir::Shape::of({2, 3})};
  for (const bool number_first : {false, true}) {
    Lowered t;
    ir::Value* x = testing::input(t.g, "x", ints);
    ir::Value* k = testing::constant_i64(t.g, "k", {16000});
    t.node = testing::onnx(t.g, "Less", number_first ? std::vector<ir::Value*>{k, x} : std::vector<ir::Value*>{x, k}, bools);
    t.lower();
    EXPECT_EQ(t.node->op_type(), number_first ? "aten.gt.Scalar" : "aten.lt.Scalar");  // 16000 < x is x > 16000
    EXPECT_EQ(t.node->inputs(), (std::vector<ir::Value*>{x}));
    EXPECT_EQ(std::get<int64_t>(t.at("other")), 16000);
  }
  Lowered f;  // floats keep the tensor form
  f.node = testing::onnx(f.g, "Equal", {testing::input(f.g, "x", f32({2, 3})), testing::constant(f.g, "k", {1}, {1.0f})}, bools);
  f.lower();
  EXPECT_EQ(f.node->op_type(), "aten.eq.Tensor");
  // A number beyond int32, or one that widens the output (rank 3 against rank 2), stays a tensor:
  // an integer Equal of two tensors is then le and ge, and-ed (ExecuTorch's runtime cannot find
  // its int32 eq.Tensor kernel).
  Lowered big;
  big.node = testing::onnx(big.g, "Equal", {testing::input(big.g, "x", ints), testing::constant_i64(big.g, "k", {int64_t{1} << 40})}, bools);
  big.lower();
  EXPECT_EQ(big.node->op_type(), "aten.logical_and.default");
  ASSERT_TRUE(big.node->input(0)->producer());
  EXPECT_EQ(big.node->input(0)->producer()->op_type(), "aten.le.Tensor");
  EXPECT_EQ(big.node->input(1)->producer()->op_type(), "aten.ge.Tensor");
  Lowered wide;
  ir::Value* k3 = wide.g.add_constant("k3", {ir::DType::Int64, ir::Shape::of({1, 1, 1})},
                                      ir::TensorData::owned(std::vector<uint8_t>(8, 0)));
  wide.node = testing::onnx(wide.g, "Equal", {testing::input(wide.g, "x", ints), k3}, {ir::DType::Bool, ir::Shape::of({1, 2, 3})});
  wide.lower();
  EXPECT_EQ(wide.node->op_type(), "aten.logical_and.default");
}

TEST(Lowering, GatherIsEmbeddingIndexSelectOrSelect) {
  Lowered emb;  // constant table, runtime indices
  ir::Value* table = testing::constant(emb.g, "table", {10, 4}, std::vector<float>(40, 1.0f));
  ir::Value* ids = testing::input(emb.g, "ids", {ir::DType::Int64, ir::Shape::of({1, 3})});
  emb.node = testing::onnx(emb.g, "Gather", {table, ids}, f32({1, 3, 4}));
  emb.lower();
  EXPECT_EQ(emb.node->op_type(), "aten.embedding.default");
  EXPECT_EQ(emb.node->inputs(), (std::vector<ir::Value*>{table, ids}));

  Lowered sel;  // runtime data, scalar constant index (negative counts from the end)
  ir::Value* x = testing::input(sel.g, "x", f32({2, 5, 3}));
  ir::Value* i = sel.g.add_constant("i", {ir::DType::Int64, ir::Shape::of({})},
                                    ir::TensorData::owned({0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}));  // -1
  sel.node = testing::onnx(sel.g, "Gather", {x, i}, f32({2, 3}), {{"axis", int64_t{1}}});
  sel.lower();
  EXPECT_EQ(sel.node->op_type(), "aten.select_copy.int");
  EXPECT_EQ(std::get<int64_t>(sel.at("index")), 4);
  EXPECT_EQ(std::get<int64_t>(sel.at("dim")), 1);

  Lowered idx;
  ir::Value* y = testing::input(idx.g, "y", f32({2, 5}));
  idx.node = testing::onnx(idx.g, "Gather", {y, testing::constant_i64(idx.g, "ix", {0, 3})}, f32({2, 2}),
                           {{"axis", int64_t{1}}});
  idx.lower();
  EXPECT_EQ(idx.node->op_type(), "aten.index_select.default");

  Lowered dyn;  // computed 1-D indices into runtime data
  ir::Value* d = testing::input(dyn.g, "d", f32({4}));
  ir::Value* k = testing::input(dyn.g, "k", {ir::DType::Int64, ir::Shape::of({2})});
  dyn.node = testing::onnx(dyn.g, "Gather", {d, k}, f32({2}));
  dyn.lower();
  EXPECT_EQ(dyn.node->op_type(), "aten.index_select.default");
  EXPECT_EQ(dyn.node->inputs(), (std::vector<ir::Value*>{d, k}));

  Lowered grid;  // computed [2, 2] indices: flattened, selected, viewed to [3, 2, 2]
  ir::Value* z = testing::input(grid.g, "z", f32({3, 5}));
  ir::Value* kk = testing::input(grid.g, "kk", {ir::DType::Int64, ir::Shape::of({2, 2})});
  grid.node = testing::onnx(grid.g, "Gather", {z, kk}, f32({3, 2, 2}), {{"axis", int64_t{1}}});
  grid.lower();
  EXPECT_EQ(grid.node->op_type(), "aten.view_copy.default");
  EXPECT_EQ(std::get<Ints>(grid.at("size")), (Ints{3, 2, 2}));
  const ir::Node* picked = grid.node->input(0)->producer();
  ASSERT_NE(picked, nullptr);
  EXPECT_EQ(picked->op_type(), "aten.index_select.default");
  EXPECT_EQ(picked->output(0)->shape().sizes(), (Ints{3, 4}));
  EXPECT_EQ(picked->input(1)->producer()->op_type(), "aten.view_copy.default");
}

TEST(Lowering, ArgMaxAndArgMinWithTheLastIndex) {
  Lowered first;
  ir::Value* x = testing::input(first.g, "x", f32({2, 5}));
  first.node = testing::onnx(first.g, "ArgMin", {x}, {ir::DType::Int64, ir::Shape::of({2, 1})}, {{"axis", int64_t{1}}});
  first.lower();
  EXPECT_EQ(first.node->op_type(), "aten.argmin.default");
  EXPECT_EQ(std::get<int64_t>(first.at("dim")), 1);

  Lowered last;  // (5 - 1) - argmax(x reversed along axis 1)
  ir::Value* y = testing::input(last.g, "y", f32({2, 5}));
  last.node = testing::onnx(last.g, "ArgMax", {y}, {ir::DType::Int64, ir::Shape::of({2})},
                            {{"axis", int64_t{-1}}, {"keepdims", int64_t{0}}, {"select_last_index", int64_t{1}}});
  last.lower();
  EXPECT_EQ(last.node->op_type(), "aten.sub.Tensor");
  ASSERT_TRUE(last.node->input(0)->is_constant());
  const ir::Node* arg = last.node->input(1)->producer();
  ASSERT_NE(arg, nullptr);
  EXPECT_EQ(arg->op_type(), "aten.argmax.default");
  EXPECT_EQ(arg->input(0)->producer()->op_type(), "aten.index_select.default");
  EXPECT_EQ(arg->input(0)->producer()->input(0), y);
}

TEST(Lowering, GatherElementsIsGatherWithItsAxis) {
  Lowered ge;  // computed indices of the data's rank; a negative axis counts from the end
  ir::Value* x = testing::input(ge.g, "x", f32({3, 4}));
  ir::Value* k = testing::input(ge.g, "k", {ir::DType::Int64, ir::Shape::of({2, 4})});
  ge.node = testing::onnx(ge.g, "GatherElements", {x, k}, f32({2, 4}), {{"axis", int64_t{-2}}});
  ge.lower();
  EXPECT_EQ(ge.node->op_type(), "aten.gather.default");
  EXPECT_EQ(ge.node->inputs(), (std::vector<ir::Value*>{x, k}));
  EXPECT_EQ(std::get<int64_t>(ge.at("dim")), 0);

  Lowered deep;  // the runtime's gather is rank <= 4
  deep.node = testing::onnx(deep.g, "GatherElements",
                            {testing::input(deep.g, "x", f32({1, 1, 1, 2, 2})),
                             testing::input(deep.g, "k", {ir::DType::Int64, ir::Shape::of({1, 1, 1, 2, 2})})},
                            f32({1, 1, 1, 2, 2}));
  deep.lower();
  EXPECT_NE(deep.reason().find("rank above 4"), std::string::npos) << deep.reason();
}

TEST(Lowering, ExpandTileDepthToSpaceSum) {
  Lowered ex;
  ex.node = testing::onnx(ex.g, "Expand", {testing::input(ex.g, "x", f32({1, 4})), testing::constant_i64(ex.g, "s", {3, 4})},
                          f32({3, 4}));
  ex.lower();
  EXPECT_EQ(ex.node->op_type(), "aten.expand_copy.default");
  EXPECT_EQ(std::get<Ints>(ex.at("size")), (Ints{3, 4}));

  Lowered tile;
  tile.node = testing::onnx(tile.g, "Tile", {testing::input(tile.g, "x", f32({2, 2})), testing::constant_i64(tile.g, "r", {1, 3})},
                            f32({2, 6}));
  tile.lower();
  EXPECT_EQ(tile.node->op_type(), "aten.repeat.default");

  Lowered d2s;
  d2s.node = testing::onnx(d2s.g, "DepthToSpace", {testing::input(d2s.g, "x", f32({1, 8, 2, 2}))}, f32({1, 2, 4, 4}),
                           {{"blocksize", int64_t{2}}, {"mode", std::string("CRD")}});
  d2s.lower();
  EXPECT_EQ(d2s.node->op_type(), "aten.pixel_shuffle.default");
  Lowered dcr;
  dcr.node = testing::onnx(dcr.g, "DepthToSpace", {testing::input(dcr.g, "x", f32({1, 8, 2, 2}))}, f32({1, 2, 4, 4}),
                           {{"blocksize", int64_t{2}}});
  dcr.lower();  // DCR: view [1, 2, 2, 2, 2, 2], permute (0, 3, 4, 1, 5, 2), view
  EXPECT_EQ(dcr.node->op_type(), "aten.view_copy.default");
  const ir::Node* move = dcr.node->input(0)->producer();
  ASSERT_EQ(move->op_type(), "aten.permute_copy.default");
  EXPECT_EQ(std::get<Ints>(*move->attr("dims")), (Ints{0, 3, 4, 1, 5, 2}));
  EXPECT_EQ(move->input(0)->shape().sizes(), (Ints{1, 2, 2, 2, 2, 2}));

  Lowered sum;
  std::vector<ir::Value*> ins;
  for (const char* nm : {"a", "b", "c"}) ins.push_back(testing::input(sum.g, nm, f32({2})));
  sum.node = testing::onnx(sum.g, "Sum", ins, f32({2}));
  sum.lower();
  ASSERT_EQ(sum.g.num_nodes(), 2u);
  EXPECT_EQ(sum.node->op_type(), "aten.add.Tensor");
}

TEST(Lowering, InstanceNormIsGroupNormWithOneGroupPerChannel) {
  Lowered t;
  ir::Value* x = testing::input(t.g, "x", f32({1, 3, 4, 5}));
  t.node = testing::onnx(t.g, "InstanceNormalization",
                         {x, testing::constant(t.g, "s", {3}, {1, 1, 1}), testing::constant(t.g, "b", {3}, {0, 0, 0})},
                         f32({1, 3, 4, 5}));
  t.lower();
  EXPECT_EQ(t.node->op_type(), "aten.native_group_norm.default");
  EXPECT_EQ(std::get<int64_t>(t.at("group")), 3);
  EXPECT_EQ(std::get<int64_t>(t.at("HxW")), 20);
  EXPECT_EQ(t.node->outputs().size(), 3u);
}

TEST(Lowering, UnknownOperatorsAreNamedNotDropped) {
  Lowered t;
  t.node = testing::onnx(t.g, "Erf", {testing::input(t.g, "x", f32({2}))}, f32({2}));
  t.lower();
  EXPECT_EQ(t.reason(), "no Vulkan lowering for Erf");
  EXPECT_TRUE(t.node->is_onnx("Erf"));
  EXPECT_EQ(t.g.num_nodes(), 1u);
}

}  // namespace
}  // namespace vkc::passes
