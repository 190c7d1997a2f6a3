// view_chain: data-movement chains read as element maps, as fuse-attention and use-kv-cache use them.
#include <gtest/gtest.h>

#include "common/graph_builder.h"
#include "view_chain.h"
#include "vkc/passes/passes.h"

namespace vkc::passes {
namespace {
using testing::f32;

// The source whose last two axes `v` swaps, or null.
ir::Value* transposed_source(const ir::Graph& g, ir::Value* v) {
  return find_view_source(g, v, [](const ir::Value* src, const ViewMap& map) {
    const auto s = src->shape().sizes();
    if (s.size() != 4 || map.out_shape() != std::vector<int64_t>{s[0], s[1], s[3], s[2]}) return false;
    return map.equals([&](const std::vector<int64_t>& i) { return flat_index({i[0], i[1], i[3], i[2]}, s); });
  });
}

TEST(ViewChain, DynamoTransposeSpellingIsATransposeOfTheLastTwoAxes) {
  for (int64_t l : {5, 300}) {  // every element, and the sampled check of a large tensor
    ir::Graph g;
    ir::Value* k = testing::input(g, "k", f32({1, 4, l, 16}));
    ir::Node* r1 = testing::onnx(g, "Reshape", {k, testing::constant_i64(g, "s1", {4, l, 16})}, f32({4, l, 16}));
    ir::Node* t = testing::onnx(g, "Transpose", {r1->output(0)}, f32({4, 16, l}), {{"perm", std::vector<int64_t>{0, 2, 1}}});
    ir::Node* r2 = testing::onnx(g, "Reshape", {t->output(0), testing::constant_i64(g, "s2", {1, 4, 16, l})},
                                 f32({1, 4, 16, l}));
    EXPECT_EQ(transposed_source(g, r2->output(0)), k) << l;
  }
}

TEST(ViewChain, AReshapeToTheSwappedShapeIsNotATranspose) {
  for (int64_t l : {5, 300}) {
    ir::Graph g;
    ir::Value* k = testing::input(g, "k", f32({1, 4, l, 16}));
    ir::Node* r = testing::onnx(g, "Reshape", {k, testing::constant_i64(g, "s", {1, 4, 16, l})}, f32({1, 4, 16, l}));
    EXPECT_EQ(transposed_source(g, r->output(0)), nullptr) << l;
  }
}

TEST(ViewChain, HeadRepeatMapsEachQueryHeadToItsGroup) {
  ir::Graph g;
  ir::Value* kv = testing::input(g, "kv", f32({1, 2, 6, 8}));
  ir::Node* u = testing::onnx(g, "Unsqueeze", {kv, testing::constant_i64(g, "ax", {2})}, f32({1, 2, 1, 6, 8}));
  ir::Node* e = testing::onnx(g, "Expand", {u->output(0), testing::constant_i64(g, "sh", {1, 2, 3, 6, 8})},
                              f32({1, 2, 3, 6, 8}));
  ir::Node* r = testing::onnx(g, "Reshape", {e->output(0), testing::constant_i64(g, "s", {1, 6, 6, 8})}, f32({1, 6, 6, 8}));
  auto repeat_of = [&](int64_t rep) {
    return find_view_source(g, r->output(0), [&](const ir::Value* src, const ViewMap& map) {
      const auto s = src->shape().sizes();
      return src == kv && map.equals([&](const std::vector<int64_t>& i) {
        return flat_index({i[0], i[1] / rep, i[2], i[3]}, s);
      });
    });
  };
  EXPECT_EQ(repeat_of(3), kv);
  EXPECT_EQ(repeat_of(1), nullptr);  // h -> h would read past kv's heads: not this map
  // A Tile repeats whole blocks (h -> h % Hkv): not the interleaved repeat grouped-query attention needs.
  ir::Node* tile = testing::onnx(g, "Tile", {kv, testing::constant_i64(g, "reps", {1, 3, 1, 1})}, f32({1, 6, 6, 8}));
  EXPECT_EQ(find_view_source(g, tile->output(0), [&](const ir::Value* src, const ViewMap& map) {
              return src == kv && map.equals([&](const std::vector<int64_t>& i) {
                       return flat_index({i[0], i[1] / 3, i[2], i[3]}, src->shape().sizes());
                     });
            }),
            nullptr);
}

}  // namespace
}  // namespace vkc::passes
