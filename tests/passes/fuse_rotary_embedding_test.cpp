// fuse-rotary-embedding: the HF rotate-half and Meta pairwise forms become et_vk.apply_rotary_emb(_hf),
// q and k paired; tables that do not repeat their halves, and patterns whose parts are read elsewhere,
// stay as they are. Numerics of the fused ops are covered end to end in tests/api/exporter_patterns_test.cpp.
#include <gtest/gtest.h>

#include "common/graph_builder.h"
#include "vkc/ir/verifier.h"
#include "vkc/kernels/attention.h"
#include "vkc/passes/passes.h"

namespace vkc::passes {
namespace {
using testing::f32;
using Ints = std::vector<int64_t>;

struct Rope {
  ir::Graph g;
  ir::Value* cos = nullptr;
  ir::Value* sin = nullptr;

  ir::Value* slice(ir::Value* x, int64_t start, int64_t end) {
    Ints shape = x->shape().sizes();
    shape.back() = std::min(end, shape.back()) - start;
    return testing::onnx(g, "Slice",
                         {x, testing::constant_i64(g, g.unique_name("s"), {start}),
                          testing::constant_i64(g, g.unique_name("e"), {end}),
                          testing::constant_i64(g, g.unique_name("a"), {-1})},
                         f32(shape))
        ->output(0);
  }
  // x * cos + Concat(-x[.., R/2:], x[.., :R/2]) * sin; `neg_by_mul` writes -x2 as x2 * -1.
  ir::Value* halves(ir::Value* x, bool neg_by_mul = false) {
    const int64_t r = x->shape().sizes().back();
    ir::Value* hi = slice(x, r / 2, INT64_MAX);
    ir::Value* neg = neg_by_mul ? testing::onnx(g, "Mul", {hi, testing::constant(g, g.unique_name("m1"), {}, {-1.f})},
                                                hi->type())->output(0)
                                : testing::onnx(g, "Neg", {hi}, hi->type())->output(0);
    ir::Value* rot = testing::onnx(g, "Concat", {neg, slice(x, 0, r / 2)}, x->type(), {{"axis", int64_t{-1}}})->output(0);
    ir::Value* a = testing::onnx(g, "Mul", {x, cos}, x->type())->output(0);
    ir::Value* b = testing::onnx(g, "Mul", {sin, rot}, x->type())->output(0);
    return testing::onnx(g, "Add", {b, a}, x->type())->output(0);
  }
  // Constant [1, 1, S, R] tables; `repeat` false breaks the halves' equality.
  void tables(int64_t s, int64_t r, bool repeat = true) {
    std::vector<float> c(s * r), n(s * r);
    for (int64_t t = 0; t < s; ++t)
      for (int64_t i = 0; i < r; ++i) {
        c[t * r + i] = 0.1f * float(t + 1) + 0.01f * float(i % (r / 2)) + (repeat || i < r / 2 ? 0.f : 0.5f);
        n[t * r + i] = 0.2f * float(t) - 0.03f * float(i % (r / 2));
      }
    cos = testing::constant(g, "cos", {1, 1, s, r}, c);
    sin = testing::constant(g, "sin", {1, 1, s, r}, n);
  }
  std::vector<ir::Node*> nodes_named(std::string_view op) {
    std::vector<ir::Node*> out;
    for (ir::Node* n : g.nodes())
      if (n->op_type() == op) out.push_back(n);
    return out;
  }
  void run() {
    PassContext ctx;
    fuse_rotary_embedding(g, ctx);
    g.compact();
    const auto errors = ir::verify(g);
    ASSERT_TRUE(errors.empty()) << errors.front();
  }
};

TEST(FuseRotaryEmbedding, QueryAndKeyHalvesBecomeOnePairedCall) {
  Rope t;
  t.tables(4, 8);
  // q [1, 4 heads, S 4, 8] from a Transpose (read before it); k [1, 2 heads, 4, 8] a plain input (permuted).
  ir::Value* q_bshd = testing::input(t.g, "q", f32({1, 4, 4, 8}));
  ir::Value* q = testing::onnx(t.g, "Transpose", {q_bshd}, f32({1, 4, 4, 8}), {{"perm", Ints{0, 2, 1, 3}}})->output(0);
  ir::Value* k = testing::input(t.g, "k", f32({1, 2, 4, 8}));
  ir::Value* k_out = t.halves(k, true);  // k first in node order: pairing still makes q xq (more heads)
  ir::Value* q_out = t.halves(q);
  t.g.outputs = {q_out, k_out};
  t.run();
  const auto ropes = t.nodes_named("et_vk.apply_rotary_emb_hf.default");
  ASSERT_EQ(ropes.size(), 1u);
  const ir::Node* rope = ropes[0];
  EXPECT_EQ(rope->input(0), q_bshd);
  EXPECT_EQ(rope->input(1)->producer()->op_type(), "aten.permute_copy.default");
  EXPECT_EQ(rope->input(1)->producer()->input(0), k);
  EXPECT_EQ(rope->input(2)->shape().sizes(), (Ints{4, 8}));
  EXPECT_EQ(std::get<int64_t>(*rope->attr("start_pos")), 0);
  // Both outputs go back to [1, H, S, D] for their users.
  for (size_t i = 0; i < 2; ++i) {
    const ir::Node* back = t.g.outputs[i]->producer();
    ASSERT_EQ(back->op_type(), "aten.permute_copy.default");
    EXPECT_EQ(back->input(0), rope->output(i));
  }
  EXPECT_TRUE(t.nodes_named("Neg").empty());
  EXPECT_TRUE(t.nodes_named("Concat").empty());
}

TEST(FuseRotaryEmbedding, LayersShareOneViewOfComputedTables) {
  // Tables computed in the graph (cos and sin of angles repeated in halves, [1, 1, S, R]) read by two
  // layers' rotaries: one [S, R] view of each serves both (not a view, and a dispatch, per layer).
  Rope t;
  ir::Value* freqs = testing::input(t.g, "freqs", f32({1, 1, 4, 4}));
  ir::Value* angles =
      testing::onnx(t.g, "Concat", {freqs, freqs}, f32({1, 1, 4, 8}), {{"axis", int64_t{-1}}})->output(0);
  t.cos = testing::onnx(t.g, "Cos", {angles}, f32({1, 1, 4, 8}))->output(0);
  t.sin = testing::onnx(t.g, "Sin", {angles}, f32({1, 1, 4, 8}))->output(0);
  std::vector<ir::Value*> outs;
  for (int layer = 0; layer < 2; ++layer) {
    ir::Value* q = testing::input(t.g, "q" + std::to_string(layer), f32({1, 4, 4, 8}));
    ir::Value* k = testing::input(t.g, "k" + std::to_string(layer), f32({1, 2, 4, 8}));
    outs.push_back(t.halves(q));
    outs.push_back(t.halves(k));
  }
  t.g.outputs = outs;
  t.run();
  const auto ropes = t.nodes_named("et_vk.apply_rotary_emb_hf.default");
  ASSERT_EQ(ropes.size(), 2u);
  const auto views = t.nodes_named("aten.view_copy.default");
  ASSERT_EQ(views.size(), 2u);
  for (const ir::Node* rope : ropes) {
    EXPECT_EQ(rope->input(2)->producer()->input(0), t.cos);
    EXPECT_EQ(rope->input(3)->producer()->input(0), t.sin);
    EXPECT_EQ(rope->input(2), ropes[0]->input(2));
    EXPECT_EQ(rope->input(3), ropes[0]->input(3));
  }
}

TEST(FuseRotaryEmbedding, PartialRotationKeepsThePassThroughColumns) {
  Rope t;
  t.tables(4, 8);
  ir::Value* q = testing::input(t.g, "q", f32({1, 2, 4, 16}));
  ir::Value* rotated = t.halves(t.slice(q, 0, 8));
  ir::Value* out =
      testing::onnx(t.g, "Concat", {rotated, t.slice(q, 8, 16)}, q->type(), {{"axis", int64_t{-1}}})->output(0);
  t.g.outputs = {out};
  t.run();
  const auto ropes = t.nodes_named("et_vk.apply_rotary_emb_hf.default");
  ASSERT_EQ(ropes.size(), 1u);
  EXPECT_EQ(ropes[0]->input(0)->producer()->input(0), q);  // the whole head, permuted to [1, S, H, D]
  EXPECT_EQ(ropes[0]->input(2)->shape().sizes(), (Ints{4, 8}));
  EXPECT_TRUE(t.nodes_named("Slice").empty());
}

TEST(FuseRotaryEmbedding, ATableWhoseHalvesDifferIsLeftAlone) {
  // The runtime op reads only the first R/2 columns: fusing would be wrong.
  Rope t;
  t.tables(4, 8, false);
  ir::Value* q = testing::input(t.g, "q", f32({1, 2, 4, 8}));
  t.g.outputs = {t.halves(q)};
  t.run();
  EXPECT_TRUE(t.nodes_named("et_vk.apply_rotary_emb_hf.default").empty());
  EXPECT_EQ(t.nodes_named("Neg").size(), 1u);
}

TEST(FuseRotaryEmbedding, APatternWhosePartsAreReadElsewhereIsLeftAlone) {
  Rope t;
  t.tables(4, 8);
  ir::Value* q = testing::input(t.g, "q", f32({1, 2, 4, 8}));
  ir::Value* out = t.halves(q);
  t.g.outputs = {out, t.nodes_named("Neg")[0]->output(0)};
  t.run();
  EXPECT_TRUE(t.nodes_named("et_vk.apply_rotary_emb_hf.default").empty());
}

TEST(FuseRotaryEmbedding, UnalignedHeadsAreLeftAlone) {
  // The runtime's shader works on texels of the rotated half: R % 8 != 0 is not fused.
  Rope t;
  t.tables(4, 4);
  ir::Value* q = testing::input(t.g, "q", f32({1, 2, 4, 4}));
  t.g.outputs = {t.halves(q)};
  t.run();
  EXPECT_TRUE(t.nodes_named("et_vk.apply_rotary_emb_hf.default").empty());
}

TEST(RotaryKernels, RotateByKnownAngles) {
  // One head, S = 1, D = 8: rotating (1, 0) pairs by 90 degrees gives (0, 1).
  using kernels::HostTensor;
  const HostTensor x = HostTensor::of(ir::DType::Float32, {1, 1, 8}, std::vector<float>{1, 0, 2, 0, 3, 0, 4, 0});
  const HostTensor c = HostTensor::of(ir::DType::Float32, {1, 4}, std::vector<float>{0, 0, 1, -1});
  const HostTensor s = HostTensor::of(ir::DType::Float32, {1, 4}, std::vector<float>{1, -1, 0, 0});
  const HostTensor pairs = kernels::rotary_emb_interleaved(x, c, s);
  const std::vector<float> want_pairs = {0, 1, 0, -2, 3, 0, -4, 0};
  for (int64_t i = 0; i < 8; ++i) EXPECT_FLOAT_EQ(pairs.get_f(i), want_pairs[i]) << i;
  // Halves, R = 4 of D = 8 from table row 1: (x0, x2) and (x1, x3) rotate, x4.. pass through.
  const HostTensor hx = HostTensor::of(ir::DType::Float32, {1, 1, 8}, std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8});
  const HostTensor hc = HostTensor::of(ir::DType::Float32, {2, 4}, std::vector<float>{9, 9, 9, 9, 0, 1, 0, 1});
  const HostTensor hs = HostTensor::of(ir::DType::Float32, {2, 4}, std::vector<float>{9, 9, 9, 9, 1, 0, 1, 0});
  const HostTensor halves = kernels::rotary_emb_half(hx, hc, hs, 1);
  // i = 0: cos 0, sin 1: out0 = -x2 = -3, out2 = x0 = 1; i = 1: cos 1, sin 0: unchanged.
  const std::vector<float> want_halves = {-3, 2, 1, 4, 5, 6, 7, 8};
  for (int64_t i = 0; i < 8; ++i) EXPECT_FLOAT_EQ(halves.get_f(i), want_halves[i]) << i;
  EXPECT_THROW(kernels::rotary_emb_half(hx, hc, hs, 2), kernels::KernelError);  // rows 2.. do not exist
}

}  // namespace
}  // namespace vkc::passes
