// fold-data-movement on the runtime form: permute pairs compose (and cancel), views of views are
// one view, order-keeping permutes become views, no-op movements go, duplicates merge; under
// --dim ranges only the rewrites that hold at every size.
#include <gtest/gtest.h>

#include "common/graph_builder.h"
#include "vkc/passes/passes.h"

namespace vkc::passes {
namespace {
using testing::f32;

ir::Node* permute(ir::Graph& g, ir::Value* x, std::vector<int64_t> dims) {
  std::vector<int64_t> out;
  for (int64_t d : dims) out.push_back(x->shape().sizes()[static_cast<size_t>(d < 0 ? d + 4 : d)]);
  return testing::runtime(g, "aten.permute_copy.default", {x}, {f32(out)}, {{"dims", dims}});
}
ir::Node* view(ir::Graph& g, ir::Value* x, std::vector<int64_t> size) {
  return testing::runtime(g, "aten.view_copy.default", {x}, {f32(size)}, {{"size", size}});
}
ir::Node* relu(ir::Graph& g, ir::Value* x) {
  ir::Node* r = testing::runtime(g, "aten.relu.default", {x}, {x->type()});
  g.outputs.push_back(r->output(0));
  return r;
}

void fold(ir::Graph& g, bool sizes_resize = false) {
  PassContext ctx;
  ctx.sizes_resize = sizes_resize;
  fold_data_movement(g, ctx);
  eliminate_dead_code(g, ctx);
}

TEST(FoldDataMovement, InversePermutesCancel) {
  ir::Graph g;
  ir::Value* x = testing::input(g, "x", f32({2, 3, 4, 5}));
  ir::Node* a = permute(g, x, {0, 2, 1, 3});
  ir::Node* b = permute(g, a->output(0), {0, 2, 1, 3});
  ir::Node* r = relu(g, b->output(0));
  fold(g);
  EXPECT_EQ(g.num_nodes(), 1u);
  EXPECT_EQ(r->input(0), x);
}

// Composed: out dim i of permute(permute(x, p), q) is x's dim p[q[i]].
TEST(FoldDataMovement, APermuteOfAPermuteIsOnePermute) {
  ir::Graph g;
  ir::Value* x = testing::input(g, "x", f32({2, 3, 4, 5}));
  ir::Node* a = permute(g, x, {1, 2, 3, 0});
  ir::Node* b = permute(g, a->output(0), {0, 2, 1, -1});
  ir::Node* r = relu(g, b->output(0));
  const ir::Shape want = b->output(0)->shape();
  fold(g);
  ASSERT_EQ(g.num_nodes(), 2u);
  ir::Node* p = r->input(0)->producer();
  ASSERT_TRUE(p && p->op_type() == "aten.permute_copy.default");
  EXPECT_EQ(p->input(0), x);
  EXPECT_EQ(p->attr_ints("dims"), (std::vector<int64_t>{1, 3, 2, 0}));
  EXPECT_EQ(p->output(0)->shape(), want);
}

// [1, 1, 4, 16] -> [1, 4, 1, 16] moves only size-1 dims: the same row-major order, a view; then
// the view of a view reads the source, and a view to the source's own shape is the source.
TEST(FoldDataMovement, OrderKeepingPermutesAreViewsAndViewChainsCollapse) {
  ir::Graph g;
  ir::Value* x = testing::input(g, "x", f32({1, 1, 64}));
  ir::Node* v = view(g, x, {1, 1, 4, 16});
  ir::Node* p = permute(g, v->output(0), {0, 2, 1, 3});
  ir::Node* back = view(g, p->output(0), {1, 1, 64});
  ir::Node* r = relu(g, back->output(0));
  fold(g);
  EXPECT_EQ(g.num_nodes(), 1u);
  EXPECT_EQ(r->input(0), x);
}

TEST(FoldDataMovement, APermuteThatMovesElementsStays) {
  ir::Graph g;
  ir::Value* x = testing::input(g, "x", f32({1, 2, 4, 16}));
  ir::Node* p = permute(g, x, {0, 2, 1, 3});
  ir::Node* r = relu(g, p->output(0));
  fold(g);
  EXPECT_EQ(g.num_nodes(), 2u);
  EXPECT_EQ(r->input(0)->producer(), p);
  EXPECT_EQ(p->op_type(), "aten.permute_copy.default");
}

TEST(FoldDataMovement, IdenticalMovementsOfOneValueAreMadeOnce) {
  ir::Graph g;
  ir::Value* x = testing::input(g, "x", f32({1, 1, 16}));
  ir::Node* a = view(g, x, {1, 16});
  ir::Node* b = view(g, x, {1, 16});
  ir::Node* ra = relu(g, a->output(0));
  ir::Node* rb = relu(g, b->output(0));
  fold(g);
  EXPECT_EQ(g.num_nodes(), 3u);
  EXPECT_EQ(ra->input(0), rb->input(0));
}

TEST(FoldDataMovement, AGraphOutputKeepsItsNode) {
  ir::Graph g;
  ir::Value* x = testing::input(g, "x", f32({2, 3, 4, 5}));
  ir::Node* a = permute(g, x, {0, 2, 1, 3});
  ir::Node* b = permute(g, a->output(0), {0, 2, 1, 3});
  g.outputs.push_back(b->output(0));
  fold(g);
  ASSERT_EQ(g.num_nodes(), 1u);  // the inner permute went; the output is a copy of x
  EXPECT_EQ(b->input(0), x);
  EXPECT_EQ(b->op_type(), "aten.view_copy.default");
  EXPECT_EQ(b->attr_ints("size"), (std::vector<int64_t>{2, 3, 4, 5}));
}

// Under --dim ranges a rewrite that reads sizes (a size-1 permute as a view, a view that is a
// no-op at this size) could differ between sizes: only the size-free ones run.
TEST(FoldDataMovement, UnderResizingSizesOnlySizeFreeRewritesRun) {
  ir::Graph g;
  ir::Value* x = testing::input(g, "x", f32({1, 1, 4, 16}));
  ir::Node* p = permute(g, x, {0, 2, 1, 3});
  ir::Node* q = permute(g, p->output(0), {0, 2, 1, 3});
  ir::Node* moved = permute(g, x, {0, 2, 1, 3});
  ir::Node* r = relu(g, q->output(0));
  relu(g, moved->output(0));
  fold(g, /*sizes_resize=*/true);
  EXPECT_EQ(r->input(0), x);  // cancelling pairs hold at every size
  EXPECT_EQ(moved->op_type(), "aten.permute_copy.default");  // a view only while S = 1
}

}  // namespace
}  // namespace vkc::passes
