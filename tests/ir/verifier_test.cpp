#include <gtest/gtest.h>

#include "common/graph_builder.h"
#include "vkc/ir/verifier.h"

namespace vkc::ir {
namespace {
using testing::f32;

bool mentions(const std::vector<std::string>& problems, const std::string& what) {
  for (const auto& p : problems)
    if (p.find(what) != std::string::npos) return true;
  return false;
}

TEST(Verifier, AcceptsAWellFormedGraph) {
  Graph g;
  Value* x = testing::input(g, "x", f32({1, 3}));
  Value* w = testing::constant(g, "w", {2, 3}, {1, 2, 3, 4, 5, 6});
  Node* n = testing::runtime(g, "aten.linear.default", {x, w, nullptr}, {f32({1, 2})});
  g.outputs.push_back(n->output(0));
  EXPECT_TRUE(verify(g).empty());
}

TEST(Verifier, UseBeforeDefinition) {
  Graph g;
  Value* x = testing::input(g, "x", f32({2}));
  Value* later = g.add_value("later", f32({2}));
  Node* first = g.add_node(kOnnxDomain, "Relu", {later}, {f32({2})}, "first");
  g.add_node_with_outputs(kOnnxDomain, "Neg", {x}, {later}, "second");
  g.outputs.push_back(first->output(0));
  EXPECT_TRUE(mentions(verify(g), "node 'first' (Relu) uses 'later' before it is defined"));
}

TEST(Verifier, UndefinedGraphOutputAndBadConstantSize) {
  Graph g;
  g.outputs.push_back(g.add_value("nowhere", f32({1})));
  g.add_constant("c", f32({4}), TensorData::owned({1, 2, 3}));
  auto problems = verify(g);
  EXPECT_TRUE(mentions(problems, "graph output 'nowhere' is never defined"));
  EXPECT_TRUE(mentions(problems, "constant 'c' of type f32[4] holds 3 bytes, expected 16"));
}

TEST(Verifier, RuntimeNodesAreCheckedAgainstTheirSchema) {
  Graph g;
  Value* x = testing::input(g, "x", f32({1, 3}));
  Node* bad_arity = testing::runtime(g, "aten.relu.default", {x, x}, {f32({1, 3})});
  Node* unknown = testing::runtime(g, "aten.not_an_op.default", {x}, {f32({1, 3})});
  Node* bad_attr = testing::runtime(g, "aten._softmax.default", {x}, {f32({1, 3})}, {{"dim", 1.0}});
  g.outputs = {bad_arity->output(0), unknown->output(0), bad_attr->output(0)};
  auto problems = verify(g);
  EXPECT_TRUE(mentions(problems, "2 tensor inputs, schema has 1"));
  EXPECT_TRUE(mentions(problems, "'aten.not_an_op.default' is not a registered runtime operator"));
  EXPECT_TRUE(mentions(problems, "argument 'dim' has the wrong kind"));
  EXPECT_TRUE(mentions(problems, "required argument 'half_to_float' is not set"));
  EXPECT_THROW(verify_or_throw(g), std::runtime_error);
}

}  // namespace
}  // namespace vkc::ir
