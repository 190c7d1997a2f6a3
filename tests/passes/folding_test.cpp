// fold-constants (with propagate_shapes), eliminate-common-subexpressions, fuse-layer-norm.
#include <gtest/gtest.h>

#include <cmath>

#include "common/graph_builder.h"
#include "folding/evaluate.h"
#include "vkc/ir/verifier.h"
#include "vkc/passes/passes.h"

namespace vkc::passes {
namespace {
using testing::f32;
using Ints = std::vector<int64_t>;

ir::TensorType i64(Ints shape) { return {ir::DType::Int64, ir::Shape::of(shape)}; }
ir::TensorType unknown() { return {}; }

std::vector<int64_t> ints(const ir::Value* v) {
  auto s = v->data().as<int64_t>();
  return {s.begin(), s.end()};
}

TEST(FoldConstants, ShapeSubgraphBecomesAConstantAndDownstreamShapesBecomeStatic) {
  // Reshape(x, Concat(Cast(Slice(Shape(x))), [-1])) — the exporter pattern ONNX inference cannot see through.
  ir::Graph g;
  ir::Value* x = testing::input(g, "x", f32({2, 3, 4}));
  ir::Node* shape = testing::onnx(g, "Shape", {x}, i64({3}));
  ir::Node* slice = testing::onnx(g, "Slice", {shape->output(0), testing::constant_i64(g, "s", {0}),
                                               testing::constant_i64(g, "e", {1})},
                                  i64({1}), {}, 13);
  ir::Node* cast = testing::onnx(g, "Cast", {slice->output(0)}, unknown(), {{"to", int64_t{7}}});
  ir::Node* cat = testing::onnx(g, "Concat", {cast->output(0), testing::constant_i64(g, "m1", {-1})}, unknown(),
                                {{"axis", int64_t{0}}});
  ir::Node* reshape = testing::onnx(g, "Reshape", {x, cat->output(0)}, unknown());
  ir::Node* relu = testing::onnx(g, "Relu", {reshape->output(0)}, unknown());
  g.outputs.push_back(relu->output(0));
  PassContext ctx;
  fold_constants(g, ctx);
  g.compact();
  ASSERT_TRUE(ir::verify(g).empty()) << ir::verify(g).front();
  EXPECT_EQ(g.num_nodes(), 2u);  // Reshape and Relu remain
  ASSERT_TRUE(reshape->input(1)->is_constant());
  EXPECT_EQ(ints(reshape->input(1)), (Ints{2, -1}));
  EXPECT_EQ(reshape->output(0)->type().str(), "f32[2,12]");
  EXPECT_EQ(relu->output(0)->type().str(), "f32[2,12]");
}

TEST(PropagateShapes, OldAndNewSliceForms) {
  ir::Graph g;
  ir::Value* x = testing::input(g, "x", f32({3, 4, 8}));
  ir::Node* old = testing::onnx(g, "Slice", {x}, unknown(),
                                {{"axes", Ints{0}}, {"starts", Ints{1}}, {"ends", Ints{2}}}, 9);
  ir::Node* sq = testing::onnx(g, "Squeeze", {old->output(0)}, unknown(), {{"axes", Ints{0}}}, 9);
  ir::Node* now = testing::onnx(g, "Slice", {x, testing::constant_i64(g, "s", {-6}), testing::constant_i64(g, "e", {INT64_MAX}),
                                             testing::constant_i64(g, "a", {2}), testing::constant_i64(g, "st", {3})},
                                unknown(), {}, 13);
  g.outputs = {sq->output(0), now->output(0)};
  EXPECT_TRUE(propagate_shapes(g));
  EXPECT_EQ(old->output(0)->type().str(), "f32[1,4,8]");
  EXPECT_EQ(sq->output(0)->type().str(), "f32[4,8]");
  EXPECT_EQ(now->output(0)->type().str(), "f32[3,4,2]");  // 2..8 step 3: 2, 5
  EXPECT_FALSE(propagate_shapes(g));
}

TEST(FoldConstants, ShapesPropagateThroughPadAndThroughWhereAndComparisonsWithTheirOwnTypes) {
  ir::Graph g;
  ir::Value* x = testing::input(g, "x", f32({2, 3, 4}));
  // Pad 13 with pads over all axes (one negative: a crop), Pad 18 with axes [-1].
  ir::Node* p13 = testing::onnx(g, "Pad", {x, testing::constant_i64(g, "p", {0, 1, 2, 0, 1, -1})}, unknown(), {}, 13);
  ir::Node* p18 = testing::onnx(g, "Pad", {x, testing::constant_i64(g, "q", {3, 4}), nullptr, testing::constant_i64(g, "ax", {-1})},
                                unknown(), {}, 18);
  ir::Node* lt = testing::onnx(g, "Less", {x, x}, unknown(), {}, 13);
  ir::Node* nan = testing::onnx(g, "IsNaN", {x}, unknown(), {}, 13);
  ir::Node* where = testing::onnx(g, "Where", {lt->output(0), testing::constant(g, "z", {1}, {0.0f}), x}, unknown(), {}, 16);
  g.outputs = {p13->output(0), p18->output(0), nan->output(0), where->output(0)};
  EXPECT_TRUE(propagate_shapes(g));
  EXPECT_EQ(p13->output(0)->type().str(), "f32[2,5,5]");
  EXPECT_EQ(p18->output(0)->type().str(), "f32[2,3,11]");
  EXPECT_EQ(lt->output(0)->type().str(), "bool[2,3,4]");
  EXPECT_EQ(nan->output(0)->type().str(), "bool[2,3,4]");
  EXPECT_EQ(where->output(0)->type().str(), "f32[2,3,4]");  // the branches' type, not the condition's
}

TEST(FoldConstants, SliceShapesWithNegativeSteps) {
  ir::Graph g;
  ir::Value* x = testing::input(g, "x", f32({10, 4}));
  // x[8:1:-3] on axis 0 (8, 5, 2) and x[::-1] on axis 1 (all four, reversed).
  ir::Node* s = testing::onnx(g, "Slice", {x, testing::constant_i64(g, "s", {8, -1}), testing::constant_i64(g, "e", {1, INT64_MIN}),
                                           testing::constant_i64(g, "a", {0, 1}), testing::constant_i64(g, "st", {-3, -1})},
                              unknown(), {}, 13);
  g.outputs = {s->output(0)};
  EXPECT_TRUE(propagate_shapes(g));
  EXPECT_EQ(s->output(0)->type().str(), "f32[3,4]");
}

TEST(FoldConstants, ArithmeticOnConstantsIsEvaluated) {
  ir::Graph g;
  ir::Value* a = testing::constant(g, "a", {2}, {1, 2});
  ir::Value* b = testing::constant(g, "b", {2}, {10, 20});
  ir::Node* add = testing::onnx(g, "Add", {a, b}, f32({2}));
  ir::Node* sqrt = testing::onnx(g, "Sqrt", {add->output(0)}, f32({2}));
  ir::Value* x = testing::input(g, "x", f32({2}));
  ir::Node* mul = testing::onnx(g, "Mul", {x, sqrt->output(0)}, f32({2}));
  g.outputs.push_back(mul->output(0));
  PassContext ctx;
  fold_constants(g, ctx);
  g.compact();
  EXPECT_EQ(g.num_nodes(), 1u);
  auto folded = testing::floats(mul->input(1));
  EXPECT_NEAR(folded[0], std::sqrt(11.0f), 1e-6);
  EXPECT_NEAR(folded[1], std::sqrt(22.0f), 1e-6);
}

TEST(FoldConstants, CausalMasksAndPositionsFromTriluAndCumSum) {
  // triu(full([3, 3], -10), k = 1): the additive causal mask exporters build; cumsum of a constant mask - 1.
  ir::Graph g;
  ir::Node* tri = testing::onnx(g, "Trilu", {testing::constant(g, "m", {3, 3}, std::vector<float>(9, -10.f)),
                                             testing::constant_i64(g, "k", {1})},
                                f32({3, 3}));
  ir::Node* cum = testing::onnx(g, "CumSum", {testing::constant(g, "ones", {1, 4}, {1, 1, 0, 1}),
                                              testing::constant_i64(g, "axis", {-1})},
                                f32({1, 4}));
  ir::Node* rev = testing::onnx(g, "CumSum", {testing::constant(g, "v", {3}, {1, 2, 3}), testing::constant_i64(g, "ax", {0})},
                                f32({3}), {{"exclusive", int64_t{1}}, {"reverse", int64_t{1}}});
  ir::Value* x = testing::input(g, "x", f32({3, 3}));
  ir::Node* add = testing::onnx(g, "Add", {x, tri->output(0)}, f32({3, 3}));
  g.outputs = {add->output(0), cum->output(0), rev->output(0)};
  PassContext ctx;
  fold_constants(g, ctx);
  g.compact();
  EXPECT_EQ(g.num_nodes(), 1u);
  EXPECT_EQ(testing::floats(add->input(1)), (std::vector<float>{0, -10, -10, 0, 0, -10, 0, 0, 0}));
  EXPECT_EQ(testing::floats(g.outputs[1]), (std::vector<float>{1, 2, 2, 3}));
  EXPECT_EQ(testing::floats(g.outputs[2]), (std::vector<float>{5, 3, 0}));
}

TEST(FoldConstants, MatMulAsNumpyMultiplies) {
  // [2, 3] x [3] -> [2] (a vector operand loses its unit axis again); [1, 2, 1] x [2, 1, 3] -> [2, 2, 3]
  // (leading axes broadcast); a product too large for the one-core reference kernel stays.
  ir::Graph g;
  ir::Node* mv = testing::onnx(g, "MatMul", {testing::constant(g, "a", {2, 3}, {1, 2, 3, 4, 5, 6}),
                                             testing::constant(g, "v", {3}, {1, 0, -1})},
                               f32({2}));
  ir::Node* bc = testing::onnx(g, "MatMul", {testing::constant(g, "f", {1, 2, 1}, {0.5f, 2}),
                                             testing::constant(g, "p", {2, 1, 3}, {1, 2, 3, 4, 5, 6})},
                               f32({2, 2, 3}));
  ir::Node* big = testing::onnx(g, "MatMul", {testing::constant(g, "l", {512, 512}, std::vector<float>(512 * 512, 1.f)),
                                              testing::constant(g, "r", {512, 512}, std::vector<float>(512 * 512, 1.f))},
                                f32({512, 512}));
  g.outputs = {mv->output(0), bc->output(0), big->output(0)};
  PassContext ctx;
  fold_constants(g, ctx);
  g.compact();
  EXPECT_EQ(g.num_nodes(), 1u);
  EXPECT_EQ(testing::floats(g.outputs[0]), (std::vector<float>{-2, -2}));
  EXPECT_EQ(g.outputs[1]->type().str(), "f32[2,2,3]");
  EXPECT_EQ(testing::floats(g.outputs[1]), (std::vector<float>{0.5f, 1, 1.5f, 2, 4, 6, 2, 2.5f, 3, 8, 10, 12}));
}

TEST(FoldConstants, LeavesNodesWithRuntimeInputsAndHugeExpansions) {
  ir::Graph g;
  ir::Value* x = testing::input(g, "x", f32({2}));
  ir::Node* relu = testing::onnx(g, "Relu", {x}, f32({2}));
  // ConstantOfShape to 4M elements: cheaper to compute than to store.
  ir::Node* big = testing::onnx(g, "ConstantOfShape", {testing::constant_i64(g, "shape", {2048, 2048})},
                                f32({2048, 2048}));
  g.outputs = {relu->output(0), big->output(0)};
  PassContext ctx;
  fold_constants(g, ctx);
  EXPECT_EQ(g.num_nodes(), 2u);
}

TEST(EliminateCommonSubexpressions, MergesEqualConstantsThenEqualNodes) {
  ir::Graph g;
  ir::Value* x = testing::input(g, "x", f32({2}));
  ir::Value* c1 = testing::constant(g, "c1", {1}, {3});
  ir::Value* c2 = testing::constant(g, "c2", {1}, {3});   // same bytes and type as c1
  ir::Value* c3 = testing::constant(g, "c3", {1}, {4});   // different
  ir::Node* a1 = testing::onnx(g, "Add", {x, c1}, f32({2}));
  ir::Node* a2 = testing::onnx(g, "Add", {x, c2}, f32({2}));
  ir::Node* a3 = testing::onnx(g, "Add", {x, c3}, f32({2}));
  ir::Node* r1 = testing::onnx(g, "Relu", {a1->output(0)}, f32({2}));
  ir::Node* r2 = testing::onnx(g, "Relu", {a2->output(0)}, f32({2}));
  g.outputs = {r1->output(0), r2->output(0), a3->output(0)};
  PassContext ctx;
  eliminate_common_subexpressions(g, ctx);
  g.compact();
  EXPECT_EQ(g.num_nodes(), 3u);  // a1, a3, r1
  EXPECT_EQ(g.outputs[0], g.outputs[1]);
  EXPECT_EQ(a3->input(1), c3);
}

TEST(FuseLayerNorm, DecomposedPatternBecomesOneNode) {
  ir::Graph g;
  ir::Value* x = testing::input(g, "x", f32({1, 4, 8}));
  const ir::AttributeMap last_axis = {{"axes", Ints{-1}}};
  ir::Node* mean = testing::onnx(g, "ReduceMean", {x}, f32({1, 4, 1}), last_axis);
  ir::Node* sub = testing::onnx(g, "Sub", {x, mean->output(0)}, f32({1, 4, 8}));
  ir::Node* pow = testing::onnx(g, "Pow", {sub->output(0), testing::constant(g, "two", {}, {2})}, f32({1, 4, 8}));
  ir::Node* var = testing::onnx(g, "ReduceMean", {pow->output(0)}, f32({1, 4, 1}), last_axis);
  ir::Node* add = testing::onnx(g, "Add", {var->output(0), testing::constant(g, "eps", {}, {1e-5f})}, f32({1, 4, 1}));
  ir::Node* sqrt = testing::onnx(g, "Sqrt", {add->output(0)}, f32({1, 4, 1}));
  ir::Node* div = testing::onnx(g, "Div", {sub->output(0), sqrt->output(0)}, f32({1, 4, 8}));
  ir::Value* gamma = testing::constant(g, "gamma", {8}, std::vector<float>(8, 2.0f));
  ir::Value* beta = testing::constant(g, "beta", {8}, std::vector<float>(8, 0.5f));
  ir::Node* mul = testing::onnx(g, "Mul", {div->output(0), gamma}, f32({1, 4, 8}));
  ir::Node* shift = testing::onnx(g, "Add", {mul->output(0), beta}, f32({1, 4, 8}));
  g.outputs.push_back(shift->output(0));
  PassContext ctx;
  fuse_layer_norm(g, ctx);
  g.compact();
  ASSERT_TRUE(ir::verify(g).empty()) << ir::verify(g).front();
  ASSERT_EQ(g.num_nodes(), 1u);
  const ir::Node* ln = g.nodes()[0];
  EXPECT_TRUE(ln->is_onnx("LayerNormalization"));
  EXPECT_EQ(ln->inputs(), (std::vector<ir::Value*>{x, gamma, beta}));
  EXPECT_NEAR(ln->attr_float("epsilon", 0), 1e-5, 1e-9);

  // ... and lowers to native_layer_norm with the two statistics outputs the runtime writes.
  lower_to_vulkan(g, ctx);
  EXPECT_EQ(ln->op_type(), "aten.native_layer_norm.default");
  ASSERT_EQ(ln->outputs().size(), 3u);
  EXPECT_EQ(ln->output(1)->shape().str(), "[1,4,1]");
  EXPECT_EQ(std::get<Ints>(*ln->attr("normalized_shape")), Ints{8});
}

TEST(FuseLayerNorm, LeavesAPatternWhoseIntermediateIsUsedElsewhere) {
  ir::Graph g;
  ir::Value* x = testing::input(g, "x", f32({1, 8}));
  const ir::AttributeMap last_axis = {{"axes", Ints{-1}}};
  ir::Node* mean = testing::onnx(g, "ReduceMean", {x}, f32({1, 1}), last_axis);
  ir::Node* sub = testing::onnx(g, "Sub", {x, mean->output(0)}, f32({1, 8}));
  ir::Node* pow = testing::onnx(g, "Pow", {sub->output(0), testing::constant(g, "two", {}, {2})}, f32({1, 8}));
  ir::Node* var = testing::onnx(g, "ReduceMean", {pow->output(0)}, f32({1, 1}), last_axis);
  ir::Node* add = testing::onnx(g, "Add", {var->output(0), testing::constant(g, "eps", {}, {1e-5f})}, f32({1, 1}));
  ir::Node* sqrt = testing::onnx(g, "Sqrt", {add->output(0)}, f32({1, 1}));
  ir::Node* div = testing::onnx(g, "Div", {sub->output(0), sqrt->output(0)}, f32({1, 8}));
  g.outputs = {div->output(0), var->output(0)};  // the variance is a graph output too
  PassContext ctx;
  fuse_layer_norm(g, ctx);
  EXPECT_EQ(g.num_nodes(), 7u);
}

TEST(FuseGelu, BothMultiplicationOrdersBecomeGelu) {
  for (bool half_first : {false, true}) {
    ir::Graph g;
    ir::Value* x = testing::input(g, "x", f32({1, 8}));
    ir::Node* div = testing::onnx(g, "Div", {x, testing::constant(g, "sqrt2", {}, {1.4142135f})}, f32({1, 8}));
    ir::Node* erf = testing::onnx(g, "Erf", {div->output(0)}, f32({1, 8}));
    ir::Node* add = testing::onnx(g, "Add", {erf->output(0), testing::constant(g, "one", {}, {1})}, f32({1, 8}));
    ir::Node* out = nullptr;
    if (half_first) {
      ir::Node* half = testing::onnx(g, "Mul", {x, testing::constant(g, "half", {}, {0.5f})}, f32({1, 8}));
      out = testing::onnx(g, "Mul", {half->output(0), add->output(0)}, f32({1, 8}));
    } else {
      ir::Node* mul = testing::onnx(g, "Mul", {x, add->output(0)}, f32({1, 8}));
      out = testing::onnx(g, "Mul", {mul->output(0), testing::constant(g, "half", {}, {0.5f})}, f32({1, 8}));
    }
    g.outputs.push_back(out->output(0));
    PassContext ctx;
    fuse_gelu(g, ctx);
    g.compact();
    ASSERT_TRUE(ir::verify(g).empty()) << ir::verify(g).front();
    ASSERT_EQ(g.num_nodes(), 1u) << half_first;
    EXPECT_TRUE(g.nodes()[0]->is_onnx("Gelu"));
    EXPECT_EQ(g.nodes()[0]->inputs(), std::vector<ir::Value*>{x});
    lower_to_vulkan(g, ctx);
    EXPECT_EQ(g.nodes()[0]->op_type(), "aten.gelu.default");
  }
}

TEST(FuseGelu, AWrongConstantIsNotGelu) {
  ir::Graph g;
  ir::Value* x = testing::input(g, "x", f32({4}));
  ir::Node* div = testing::onnx(g, "Div", {x, testing::constant(g, "c", {}, {2.0f})}, f32({4}));
  ir::Node* erf = testing::onnx(g, "Erf", {div->output(0)}, f32({4}));
  ir::Node* add = testing::onnx(g, "Add", {erf->output(0), testing::constant(g, "one", {}, {1})}, f32({4}));
  ir::Node* mul = testing::onnx(g, "Mul", {x, add->output(0)}, f32({4}));
  ir::Node* out = testing::onnx(g, "Mul", {mul->output(0), testing::constant(g, "half", {}, {0.5f})}, f32({4}));
  g.outputs.push_back(out->output(0));
  PassContext ctx;
  fuse_gelu(g, ctx);
  EXPECT_EQ(g.num_nodes(), 5u);
}

TEST(FuseRmsNorm, ReciprocalDivAndRsqrtFormsBecomeOneNode) {
  for (int form = 0; form < 3; ++form) {
    ir::Graph g;
    ir::Value* x = testing::input(g, "x", f32({1, 3, 8}));
    ir::Node* sq = testing::onnx(g, "Pow", {x, testing::constant(g, "two", {}, {2})}, f32({1, 3, 8}));
    ir::Node* mean = testing::onnx(g, "ReduceMean", {sq->output(0)}, f32({1, 3, 1}), {{"axes", Ints{-1}}});
    ir::Node* add = testing::onnx(g, "Add", {mean->output(0), testing::constant(g, "eps", {}, {1e-6f})}, f32({1, 3, 1}));
    ir::Value* normed = nullptr;
    if (form == 0) {  // x * Reciprocal(Sqrt(.))
      ir::Node* sqrt = testing::onnx(g, "Sqrt", {add->output(0)}, f32({1, 3, 1}));
      ir::Node* rec = testing::onnx(g, "Reciprocal", {sqrt->output(0)}, f32({1, 3, 1}));
      normed = testing::onnx(g, "Mul", {x, rec->output(0)}, f32({1, 3, 8}))->output(0);
    } else if (form == 1) {  // x / Sqrt(.)
      ir::Node* sqrt = testing::onnx(g, "Sqrt", {add->output(0)}, f32({1, 3, 1}));
      normed = testing::onnx(g, "Div", {x, sqrt->output(0)}, f32({1, 3, 8}))->output(0);
    } else {  // x * Pow(., -0.5)
      ir::Node* rs = testing::onnx(g, "Pow", {add->output(0), testing::constant(g, "mh", {}, {-0.5f})}, f32({1, 3, 1}));
      normed = testing::onnx(g, "Mul", {rs->output(0), x}, f32({1, 3, 8}))->output(0);
    }
    ir::Value* w = testing::constant(g, "w", {8}, std::vector<float>(8, 3.0f));
    ir::Node* out = testing::onnx(g, "Mul", {normed, w}, f32({1, 3, 8}));
    g.outputs.push_back(out->output(0));
    PassContext ctx;
    fuse_rms_norm(g, ctx);
    g.compact();
    ASSERT_TRUE(ir::verify(g).empty()) << ir::verify(g).front();
    ASSERT_EQ(g.num_nodes(), 1u) << "form " << form;
    const ir::Node* n = g.nodes()[0];
    EXPECT_EQ(n->op_type(), "et_vk.rms_norm.default");
    EXPECT_EQ(n->inputs(), (std::vector<ir::Value*>{x, w}));
    EXPECT_NEAR(std::get<double>(*n->attr("eps")), 1e-6, 1e-12);
  }
}

// Q, K, V [1, 2, 4, 8]: MatMul(Softmax(MatMul(Q, Transpose(K)) / sqrt(8) + mask), V)
struct Attention {
  ir::Graph g;
  ir::Value *q, *k, *v, *mask;
  ir::Node* out;
  explicit Attention(bool with_mask, bool split_scale) {
    q = testing::input(g, "q", f32({1, 2, 4, 8}));
    k = testing::input(g, "k", f32({1, 2, 4, 8}));
    v = testing::input(g, "v", f32({1, 2, 4, 8}));
    mask = with_mask ? testing::input(g, "mask", f32({1, 1, 4, 4})) : nullptr;
    ir::Value* qs = q;
    ir::Node* kt = testing::onnx(g, "Transpose", {k}, f32({1, 2, 8, 4}), {{"perm", Ints{0, 1, 3, 2}}});
    ir::Value* kts = kt->output(0);
    if (split_scale) {  // dynamo: both sides scaled by scale^0.5
      qs = testing::onnx(g, "Mul", {q, testing::constant(g, "sq", {}, {0.5946036f})}, f32({1, 2, 4, 8}))->output(0);
      kts = testing::onnx(g, "Mul", {kts, testing::constant(g, "sk", {}, {0.5946036f})}, f32({1, 2, 8, 4}))->output(0);
    }
    ir::Value* s = testing::onnx(g, "MatMul", {qs, kts}, f32({1, 2, 4, 4}))->output(0);
    if (!split_scale)
      s = testing::onnx(g, "Div", {s, testing::constant(g, "d", {}, {2.8284271f})}, f32({1, 2, 4, 4}))->output(0);
    if (mask) s = testing::onnx(g, "Add", {s, mask}, f32({1, 2, 4, 4}))->output(0);
    ir::Node* sm = testing::onnx(g, "Softmax", {s}, f32({1, 2, 4, 4}), {{"axis", int64_t{-1}}}, 13);
    out = testing::onnx(g, "MatMul", {sm->output(0), v}, f32({1, 2, 4, 8}));
    g.outputs.push_back(out->output(0));
  }
};

TEST(FuseAttention, LegacyAndDynamoFormsBecomeSdpa) {
  for (bool split : {false, true})
    for (bool with_mask : {false, true}) {
      Attention a(with_mask, split);
      PassContext ctx;
      fuse_attention(a.g, ctx);
      a.g.compact();
      ASSERT_TRUE(ir::verify(a.g).empty()) << ir::verify(a.g).front();
      ASSERT_EQ(a.g.num_nodes(), 1u) << split << with_mask;
      EXPECT_EQ(a.out->op_type(), "et_vk.sdpa.default");
      EXPECT_EQ(a.out->inputs(), (std::vector<ir::Value*>{a.q, a.k, a.v, a.mask}));
      EXPECT_NEAR(std::get<double>(*a.out->attr("scale")), 1.0 / std::sqrt(8.0), 1e-6);
    }
}

TEST(FuseAttention, LeavesAttentionWhoseScoresAreUsedElsewhere) {
  Attention a(false, false);
  // The softmax input becomes a graph output too: fusing would drop it.
  ir::Node* sm = nullptr;
  for (ir::Node* n : a.g.nodes())
    if (n->is_onnx("Softmax")) sm = n;
  a.g.outputs.push_back(sm->input(0));
  PassContext ctx;
  fuse_attention(a.g, ctx);
  EXPECT_TRUE(a.out->is_onnx("MatMul"));
}

}  // namespace
}  // namespace vkc::passes

namespace vkc::passes {
namespace {

TEST(PropagateShapes, SplitFromItsInputAttributeOrEqualParts) {
  ir::Graph g;
  ir::Value* x = testing::input(g, "x", f32({1, 1, 96}));
  ir::Node* by_input = g.add_node(ir::kOnnxDomain, "Split", {x, testing::constant_i64(g, "sizes", {32, 64})},
                                  {ir::TensorType{}, ir::TensorType{}}, "by_input");
  by_input->attrs() = {{"axis", int64_t{2}}};
  by_input->set_opset(13);
  ir::Node* by_attr = g.add_node(ir::kOnnxDomain, "Split", {x}, {ir::TensorType{}, ir::TensorType{}}, "by_attr");
  by_attr->attrs() = {{"axis", int64_t{-1}}, {"split", Ints{90, 6}}};
  by_attr->set_opset(11);
  ir::Node* equal = g.add_node(ir::kOnnxDomain, "Split", {x}, {ir::TensorType{}, ir::TensorType{}, ir::TensorType{}},
                               "equal");
  equal->attrs() = {{"axis", int64_t{2}}};
  equal->set_opset(18);
  ir::Node* wrong = g.add_node(ir::kOnnxDomain, "Split", {x, testing::constant_i64(g, "bad", {32, 32})},
                               {ir::TensorType{}, ir::TensorType{}}, "wrong");
  wrong->attrs() = {{"axis", int64_t{2}}};
  wrong->set_opset(13);
  g.outputs = {by_input->output(0), by_input->output(1), by_attr->output(0), by_attr->output(1), equal->output(2),
               wrong->output(0)};
  std::map<std::string, std::string> contradictions;
  EXPECT_TRUE(propagate_shapes(g, &contradictions));
  EXPECT_EQ(by_input->output(0)->type().str(), "f32[1,1,32]");
  EXPECT_EQ(by_input->output(1)->type().str(), "f32[1,1,64]");
  EXPECT_EQ(by_attr->output(0)->type().str(), "f32[1,1,90]");
  EXPECT_EQ(by_attr->output(1)->type().str(), "f32[1,1,6]");
  EXPECT_EQ(equal->output(2)->type().str(), "f32[1,1,32]");
  EXPECT_FALSE(wrong->output(0)->type().known());  // 32 + 32 does not cut 96: a contradiction, reported
  EXPECT_EQ(contradictions.count("wrong"), 1u);
}

TEST(Evaluate, AValueComputedFromABoundInputAtEachValueItTakes) {
  // mask[j] = Where(j <= p + 1, 0, -inf) over j in [0, 4): what use-kv-cache checks at each input_pos.
  ir::Graph g;
  ir::Value* p = testing::input(g, "p", i64({1}));
  ir::Value* x = testing::input(g, "x", f32({2, 4}));
  ir::Node* q = testing::onnx(g, "Add", {p, testing::constant_i64(g, "one", {1})}, i64({1}));
  ir::Node* size = testing::onnx(g, "Shape", {x}, i64({2}));  // static shape: no data needed
  ir::Node* len = testing::onnx(g, "Gather", {size->output(0), testing::constant_i64(g, "axis1", {1})}, i64({1}),
                                {{"axis", int64_t{0}}});
  ir::Node* squeeze = testing::onnx(g, "Squeeze", {len->output(0)}, i64({}));
  ir::Value* zero = testing::constant_i64(g, "zero", {0});
  ir::Value* step = testing::constant_i64(g, "step", {1});
  zero->set_type(i64({}));  // Range takes 0-D start and delta
  step->set_type(i64({}));
  ir::Node* range = testing::onnx(g, "Range", {zero, squeeze->output(0), step}, i64({4}));
  ir::Node* le = testing::onnx(g, "LessOrEqual", {range->output(0), q->output(0)}, {ir::DType::Bool, ir::Shape::of({4})});
  ir::Node* where = testing::onnx(g, "Where", {le->output(0), testing::constant(g, "z", {}, {0.0f}),
                                               testing::constant(g, "ninf", {}, {-INFINITY})},
                                  f32({4}));
  g.outputs = {where->output(0)};
  for (int64_t at : {0, 2}) {
    const auto v = folding::evaluate(where->output(0), {{p, kernels::HostTensor::of<int64_t>(ir::DType::Int64, {1}, {at})}});
    ASSERT_TRUE(v.has_value()) << at;
    for (int64_t j = 0; j < 4; ++j) EXPECT_EQ(v->get_f(j) == 0.0, j <= at + 1) << "p " << at << ", j " << j;
  }
  EXPECT_FALSE(folding::evaluate(where->output(0), {}).has_value());  // p unbound
}

}  // namespace
}  // namespace vkc::passes
