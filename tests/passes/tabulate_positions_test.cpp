// tabulate-positions: what a decode step computes from input_pos alone becomes a lookup in a table
// of its values at every position input_pos may take, with the values the graph's own math gives.
#include <gtest/gtest.h>

#include <fmt/format.h>

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

struct Rotary {
  ir::Graph g;
  ir::Value* pos = nullptr;
  ir::Value* x = nullptr;
  ir::Node* out = nullptr;
};

// HF's rotary angles as torch.onnx writes them for S tokens at input_pos: positions input_pos +
// [0, S), a MatMul by the inverse frequencies, Concat(freqs, freqs), Cos and Sin, read by
// x * cos + x * sin + x * cos (the last from a second Cos node); beside them a bool [1, S] computed from the positions (a mask's kind) picks x
// or 0 at the end.
void build(Rotary& r, int64_t s) {
  ir::Graph& g = r.g;
  r.pos = testing::input(g, "input_pos", i64({1}));
  r.x = testing::input(g, "x", f32({1, s, 8}));
  Ints steps(s);
  for (int64_t i = 0; i < s; ++i) steps[i] = i;
  ir::Node* col = testing::onnx(g, "Reshape", {r.pos, testing::constant_i64(g, "col", {1, 1})}, i64({1, 1}));
  ir::Node* ids = testing::onnx(g, "Add", {col->output(0), testing::constant_i64(g, "steps", steps)}, i64({1, s}));
  ir::Node* un = testing::onnx(g, "Unsqueeze", {ids->output(0), testing::constant_i64(g, "ax", {1})}, i64({1, 1, s}));
  ir::Node* fl = testing::onnx(g, "Cast", {un->output(0)}, f32({1, 1, s}), {{"to", int64_t{1}}});
  ir::Node* mm = testing::onnx(g, "MatMul", {testing::constant(g, "inv_freq", {1, 4, 1}, {1.f, 0.1f, 0.01f, 0.001f}),
                                             fl->output(0)},
                               f32({1, 4, s}));
  ir::Node* tr = testing::onnx(g, "Transpose", {mm->output(0)}, f32({1, s, 4}), {{"perm", Ints{0, 2, 1}}});
  ir::Node* cat = testing::onnx(g, "Concat", {tr->output(0), tr->output(0)}, f32({1, s, 8}), {{"axis", int64_t{-1}}});
  ir::Node* cos = testing::onnx(g, "Cos", {cat->output(0)}, f32({1, s, 8}));
  ir::Node* sin = testing::onnx(g, "Sin", {cat->output(0)}, f32({1, s, 8}));
  ir::Node* a = testing::onnx(g, "Mul", {r.x, cos->output(0)}, f32({1, s, 8}));
  ir::Node* b = testing::onnx(g, "Mul", {r.x, sin->output(0)}, f32({1, s, 8}));
  ir::Node* ab = testing::onnx(g, "Add", {a->output(0), b->output(0)}, f32({1, s, 8}));
  // The same cosines again (as each layer of an export may compute its own): one table for both.
  ir::Node* cos2 = testing::onnx(g, "Cos", {cat->output(0)}, f32({1, s, 8}));
  ir::Node* c = testing::onnx(g, "Mul", {r.x, cos2->output(0)}, f32({1, s, 8}));
  ir::Node* sum = testing::onnx(g, "Add", {ab->output(0), c->output(0)}, f32({1, s, 8}));
  ir::Node* early = testing::onnx(g, "Less", {ids->output(0), testing::constant_i64(g, "three", {3})},
                                  {ir::DType::Bool, ir::Shape::of({1, s})});
  ir::Node* keep = testing::onnx(g, "Unsqueeze", {early->output(0), testing::constant_i64(g, "ax2", {2})},
                                 {ir::DType::Bool, ir::Shape::of({1, s, 1})});
  r.out = testing::onnx(g, "Where", {keep->output(0), sum->output(0), testing::constant(g, "zero", {1}, {0.f})},
                        f32({1, s, 8}));
  g.outputs = {r.out->output(0)};
}

std::vector<float> at(const Rotary& r, int64_t p, int64_t s) {
  std::vector<float> x(static_cast<size_t>(s * 8));
  for (size_t i = 0; i < x.size(); ++i) x[i] = 0.25f * static_cast<float>(i) - 1.0f;
  const auto v = folding::evaluate(r.out->output(0), {{r.pos, kernels::HostTensor::of<int64_t>(ir::DType::Int64, {1}, {p})},
                                                      {r.x, kernels::HostTensor::of<float>(ir::DType::Float32, {1, s, 8}, x)}});
  if (!v) return {};
  auto f = v->data.as<float>();
  return {f.begin(), f.end()};
}

// tabulate-positions over `r` as use-kv-cache leaves its context: N positions, S tokens a call.
PassContext tabulate(Rotary& r, int64_t n, int64_t s, bool resizing = false) {
  PassContext ctx;
  ctx.max_seq_len = n;
  ctx.kv_input_pos = r.pos;
  ctx.kv_step_tokens = s;
  ctx.sizes_resize = resizing;
  tabulate_positions(r.g, ctx);
  return ctx;
}

size_t count(const ir::Graph& g, const char* op) {
  size_t n = 0;
  for (const ir::Node* node : g.nodes()) n += node->is_onnx(op) ? 1 : 0;
  return n;
}

TEST(TabulatePositions, RotaryAnglesBecomeLookupsWithTheGraphsOwnValues) {
  // One token a call: a row per input_pos. Three (fixed, or a count that resizes): a row per
  // position, read at input_pos + [0, 3).
  struct Case {
    int64_t s;
    bool resizing;
  };
  for (const Case c : {Case{1, false}, Case{3, false}, Case{3, true}}) {
    SCOPED_TRACE(fmt::format("S {}{}", c.s, c.resizing ? ", resizing" : ""));
    Rotary r;
    build(r, c.s);
    const int64_t n = 100;
    const Ints probes = {0, 2, 3, 57, n - c.s};
    std::vector<std::vector<float>> before;
    for (int64_t p : probes) before.push_back(at(r, p, c.s));
    const PassContext ctx = tabulate(r, n, c.s, c.resizing);
    r.g.compact();
    ASSERT_TRUE(ir::verify(r.g).empty()) << ir::verify(r.g).front();
    EXPECT_EQ(count(r.g, "Cos") + count(r.g, "Sin") + count(r.g, "MatMul") + count(r.g, "Cast"), 0u);
    size_t tables = 0;
    for (const ir::Node* g : r.g.nodes())
      if (g->is_onnx("Gather") && g->input(0)->is_constant()) {
        ++tables;
        EXPECT_EQ(g->input(0)->type().str(), fmt::format("f32[{},8]", n));
        EXPECT_EQ(g->input(1) == r.pos, c.s == 1);  // else the positions input_pos + [0, S)
        EXPECT_EQ(g->output(0)->type().str(), c.s == 1 ? "f32[1,8]" : "f32[1,3,8]");
      }
    EXPECT_EQ(tables, 2u);                   // cos (read by both) and sin
    EXPECT_EQ(count(r.g, "Less"), 1u);       // the bool stays computed (from the positions it still needs)
    for (size_t i = 0; i < probes.size(); ++i) EXPECT_EQ(at(r, probes[i], c.s), before[i]) << "input_pos " << probes[i];
    ASSERT_EQ(ctx.notes.size(), 1u);
    EXPECT_NE(ctx.notes[0].find("3 value(s)"), std::string::npos) << ctx.notes[0];
    EXPECT_NE(ctx.notes[0].find("from 2 table(s)"), std::string::npos) << ctx.notes[0];
  }
}

TEST(TabulatePositions, AValueNotPositionByPositionIsARowPerInputPosOrStaysComputed) {
  // CumSum over the tokens' axis of the positions as floats: row i is p + (p + 1) + ... + (p + i),
  // not a function of p + i alone. With 3 tokens a call it is a row of all 3 per input_pos; where
  // the count resizes (a row of 3 is not a prefix of one of 2) it stays computed.
  for (bool resizing : {false, true}) {
    SCOPED_TRACE(resizing ? "resizing" : "fixed");
    ir::Graph g;
    ir::Value* pos = testing::input(g, "input_pos", i64({1}));
    ir::Value* x = testing::input(g, "x", f32({1, 3, 1}));
    ir::Node* col = testing::onnx(g, "Reshape", {pos, testing::constant_i64(g, "col", {1, 1})}, i64({1, 1}));
    ir::Node* ids = testing::onnx(g, "Add", {col->output(0), testing::constant_i64(g, "steps", {0, 1, 2})}, i64({1, 3}));
    ir::Node* un = testing::onnx(g, "Unsqueeze", {ids->output(0), testing::constant_i64(g, "ax", {2})}, i64({1, 3, 1}));
    ir::Node* fl = testing::onnx(g, "Cast", {un->output(0)}, f32({1, 3, 1}), {{"to", int64_t{1}}});
    ir::Node* cum = testing::onnx(g, "CumSum", {fl->output(0), testing::constant_i64(g, "axis", {1})}, f32({1, 3, 1}));
    ir::Node* out = testing::onnx(g, "Mul", {x, cum->output(0)}, f32({1, 3, 1}));
    g.outputs = {out->output(0)};
    const auto value_at = [&](int64_t p) {
      const auto v = folding::evaluate(out->output(0), {{pos, kernels::HostTensor::of<int64_t>(ir::DType::Int64, {1}, {p})},
                                                        {x, kernels::HostTensor::of<float>(ir::DType::Float32, {1, 3, 1}, {1.f, 2.f, 3.f})}});
      if (!v) return std::vector<float>{};
      const auto f = v->data.as<float>();
      return std::vector<float>(f.begin(), f.end());
    };
    const std::vector<float> before = value_at(40);
    EXPECT_EQ(before, (std::vector<float>{40, 2 * 81, 3 * 123}));
    PassContext ctx;
    ctx.max_seq_len = 64;
    ctx.kv_input_pos = pos;
    ctx.kv_step_tokens = 3;
    ctx.sizes_resize = resizing;
    tabulate_positions(g, ctx);
    g.compact();
    ASSERT_TRUE(ir::verify(g).empty()) << ir::verify(g).front();
    EXPECT_EQ(count(g, "CumSum"), resizing ? 1u : 0u);
    if (!resizing) {
      ir::Node* lookup = nullptr;
      for (ir::Node* node : g.nodes())
        if (node->is_onnx("Gather")) lookup = node;
      ASSERT_NE(lookup, nullptr);
      EXPECT_EQ(lookup->input(0)->type().str(), "f32[62,3]");  // input_pos 0 .. 61, 3 values a row
      EXPECT_EQ(lookup->input(1), pos);
    }
    EXPECT_EQ(value_at(40), before);
    EXPECT_EQ(value_at(61), (std::vector<float>{61, 2 * 123, 3 * 186}));
  }
}

TEST(TabulatePositions, ALearnedPositionEmbeddingReadThroughANodeOnConstants) {
  // Whisper's decoder as torch.onnx writes it: the position embedding gathered from a Reshape of
  // the weights that folding left (made after it); that node counts as a constant.
  ir::Graph g;
  ir::Value* pos = testing::input(g, "input_pos", i64({1}));
  ir::Value* x = testing::input(g, "x", f32({1, 1, 4}));
  std::vector<float> w(16 * 4);
  for (size_t i = 0; i < w.size(); ++i) w[i] = 0.5f * static_cast<float>(i) - 3.0f;
  ir::Node* rows = testing::onnx(g, "Reshape", {testing::constant(g, "w", {64}, w), testing::constant_i64(g, "shape", {16, 4})},
                                 f32({16, 4}));
  ir::Node* col = testing::onnx(g, "Reshape", {pos, testing::constant_i64(g, "col", {1, 1})}, i64({1, 1}));
  ir::Node* pe = testing::onnx(g, "Gather", {rows->output(0), col->output(0)}, f32({1, 1, 4}), {{"axis", int64_t{0}}});
  ir::Node* out = testing::onnx(g, "Add", {x, pe->output(0)}, f32({1, 1, 4}));
  g.outputs = {out->output(0)};
  PassContext ctx;
  ctx.max_seq_len = 16;
  ctx.kv_input_pos = pos;
  ctx.kv_step_tokens = 1;
  tabulate_positions(g, ctx);
  g.compact();
  ASSERT_TRUE(ir::verify(g).empty()) << ir::verify(g).front();
  ASSERT_EQ(ctx.notes.size(), 1u);
  EXPECT_NE(ctx.notes[0].find("1 value(s)"), std::string::npos) << ctx.notes[0];
  ASSERT_NE(out->input(1)->producer(), nullptr);
  const auto v = folding::evaluate(out->input(1), {{pos, kernels::HostTensor::of<int64_t>(ir::DType::Int64, {1}, {9})}});
  ASSERT_TRUE(v.has_value());
  const auto f = v->data.as<float>();
  EXPECT_EQ(std::vector<float>(f.begin(), f.end()), std::vector<float>(w.begin() + 36, w.begin() + 40));
}

TEST(TabulatePositions, ARotaryEmbeddingReadsItsTablesAtInputPos) {
  // The fused rotary embedding (fuse-rotary-embedding's form: cos and sin viewed as [S, cols])
  // over lookups in tables of every position takes the tables and input_pos as its SymInt
  // start_pos: rows start_pos + s, no lookup. With 1 and 3 tokens a call.
  for (int64_t s : {1, 3}) {
    SCOPED_TRACE(s);
    Rotary r;
    build(r, s);
    ir::Value* cos = nullptr;
    ir::Value* sin = nullptr;
    for (ir::Node* node : r.g.nodes()) {
      if (node->is_onnx("Cos")) cos = cos ? cos : node->output(0);
      if (node->is_onnx("Sin")) sin = node->output(0);
    }
    ASSERT_TRUE(cos && sin);
    const auto view = [&](ir::Value* t) {
      ir::Node* v = testing::runtime(r.g, "aten.view_copy.default", {t}, {f32({s, 8})});
      v->attrs() = {{"size", Ints{s, 8}}};
      return v->output(0);
    };
    ir::Value* q = testing::input(r.g, "q", f32({1, s, 2, 8}));
    ir::Node* rope = testing::runtime(r.g, "et_vk.apply_rotary_emb_hf.default", {q, q, view(cos), view(sin)},
                                      {f32({1, s, 2, 8}), f32({1, s, 2, 8})}, {{"start_pos", int64_t{0}}});
    r.g.outputs.push_back(rope->output(0));
    const PassContext ctx = tabulate(r, 100, s);
    ASSERT_TRUE(ir::verify(r.g).empty()) << ir::verify(r.g).front();
    ASSERT_EQ(rope->num_inputs(), 5u);
    EXPECT_EQ(rope->input(4), r.pos);
    EXPECT_FALSE(rope->has_attr("start_pos"));
    for (size_t i : {2u, 3u}) {
      ASSERT_TRUE(rope->input(i)->is_constant());
      EXPECT_EQ(rope->input(i)->type().str(), "f32[100,8]");
    }
    // Row 57 of the cosines is cos(57 * inv_freq) (Concat(freqs, freqs)), as the graph computes it.
    const auto table = rope->input(2)->data().as<float>();
    for (int64_t c = 0; c < 8; ++c)
      EXPECT_FLOAT_EQ(table[57 * 8 + c], std::cos(57.0f * std::vector<float>{1.f, 0.1f, 0.01f, 0.001f}[c % 4]));
    ASSERT_EQ(ctx.notes.size(), 1u);
    EXPECT_NE(ctx.notes[0].find("1 rotary embedding(s) read theirs at input_pos"), std::string::npos) << ctx.notes[0];
  }
}

TEST(TabulatePositions, TablesPastTheBudgetAndStepsWithoutMaxSeqLenStayComputed) {
  // 300,000 positions of 8 floats: 9.4 MiB a table, past the 8 MiB a graph of small weights gets
  // (a note names them); no --max-seq-len: nothing to do.
  for (const int64_t n : {int64_t{300000}, int64_t{0}}) {
    Rotary r;
    build(r, 1);
    const PassContext ctx = tabulate(r, n, 1);
    EXPECT_EQ(count(r.g, "Cos") + count(r.g, "Sin"), 3u);
    ASSERT_EQ(ctx.notes.size(), n ? 1u : 0u);
    if (n) EXPECT_NE(ctx.notes[0].find("past the 8192 KiB"), std::string::npos) << ctx.notes[0];
  }
}

}  // namespace
}  // namespace vkc::passes
