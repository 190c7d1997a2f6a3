#include <gtest/gtest.h>

#include "common/graph_builder.h"
#include "vkc/ir/printer.h"

namespace vkc::ir {
namespace {
using testing::f32;

TEST(Graph, ReplaceUsesAndCompactDropUnusedValues) {
  Graph g;
  Value* x = testing::input(g, "x", f32({1, 4}));
  Node* a = testing::onnx(g, "Relu", {x}, f32({1, 4}));
  Node* b = testing::onnx(g, "Identity", {a->output(0)}, f32({1, 4}));
  g.outputs.push_back(b->output(0));
  g.replace_all_uses(b->output(0), a->output(0));
  g.remove_node(b);
  g.compact();
  EXPECT_EQ(g.num_nodes(), 1u);
  EXPECT_EQ(g.outputs[0], a->output(0));
  EXPECT_EQ(g.values().size(), 2u);  // x and relu's output
  EXPECT_EQ(g.users(x), std::vector<Node*>{a});
}

TEST(Graph, UseListsFollowEveryEdit) {
  // users() and replace_all_uses read per-value use lists; each way of changing a node's inputs
  // keeps them right: creation, set_input, set_inputs, morph, replace_all_uses, removal + compact.
  Graph g;
  Value* x = testing::input(g, "x", f32({4}));
  Value* y = testing::input(g, "y", f32({4}));
  Node* a = testing::onnx(g, "Add", {x, x}, f32({4}));  // x read twice
  Node* b = testing::onnx(g, "Mul", {a->output(0), y}, f32({4}));
  Node* c = testing::onnx(g, "Neg", {x}, f32({4}));
  g.outputs = {b->output(0), c->output(0)};
  EXPECT_EQ(g.users(x), (std::vector<Node*>{a, c}));  // once each, in node order
  a->set_input(1, y);
  EXPECT_EQ(g.users(x), (std::vector<Node*>{a, c}));
  EXPECT_EQ(g.users(y), (std::vector<Node*>{a, b}));
  a->set_input(0, y);
  EXPECT_EQ(g.users(x), std::vector<Node*>{c});
  c->morph(kOnnxDomain, "Relu", {y}, {});
  EXPECT_TRUE(g.users(x).empty());
  EXPECT_EQ(g.users(y), (std::vector<Node*>{a, b, c}));
  b->set_inputs({a->output(0), x});
  EXPECT_EQ(g.users(x), std::vector<Node*>{b});
  g.replace_all_uses(y, x);  // a reads x twice again, c reads x
  EXPECT_TRUE(g.users(y).empty());
  EXPECT_EQ(g.users(x), (std::vector<Node*>{a, b, c}));
  EXPECT_EQ(a->input(0), x);
  EXPECT_EQ(a->input(1), x);
  g.replace_all_uses(c->output(0), a->output(0));  // a graph output too
  EXPECT_EQ(g.outputs[1], a->output(0));
  g.remove_node(c);
  EXPECT_EQ(g.users(x), (std::vector<Node*>{a, b}));  // removed nodes are not users
  g.compact();
  g.replace_all_uses(x, y);  // after compact, only live nodes are rewritten
  EXPECT_EQ(g.users(y), (std::vector<Node*>{a, b}));
  EXPECT_EQ(b->input(1), y);
}

TEST(Graph, TopoSortIsStableAndFindsCycles) {
  Graph g;
  Value* x = testing::input(g, "x", f32({2}));
  Value* late = g.add_value("late", f32({2}));
  Node* consumer = g.add_node(kOnnxDomain, "Relu", {late}, {f32({2})}, "consumer");
  Node* producer = g.add_node_with_outputs(kOnnxDomain, "Neg", {x}, {late}, "producer");
  g.topo_sort();
  auto order = g.nodes();
  ASSERT_EQ(order.size(), 2u);
  EXPECT_EQ(order[0], producer);
  EXPECT_EQ(order[1], consumer);

  producer->set_input(0, consumer->output(0));  // now a cycle
  EXPECT_THROW(g.topo_sort(), std::runtime_error);
}

TEST(Graph, AddNodeBeforeInsertsAtPosition) {
  Graph g;
  Value* x = testing::input(g, "x", f32({2}));
  Node* a = testing::onnx(g, "Relu", {x}, f32({2}));
  Node* b = g.add_node(kOnnxDomain, "Neg", {x}, {f32({2})}, "first", a);
  EXPECT_EQ(g.nodes().front(), b);
}

TEST(Graph, UniqueNamesNeverCollide) {
  Graph g;
  Value* a = g.add_value("t", f32({1}));
  Value* b = g.add_value("t", f32({1}));
  EXPECT_NE(a->name(), b->name());
  EXPECT_EQ(g.find_value(b->name()), b);
}

TEST(Printer, ShowsTypesConstantsAndAttributes) {
  Graph g;
  Value* x = testing::input(g, "x", f32({1, 3}));
  Value* w = testing::constant(g, "w", {2, 3}, {1, 2, 3, 4, 5, 6});
  Node* n = testing::runtime(g, "aten.linear.default", {x, w, nullptr}, {f32({1, 2})});
  g.outputs.push_back(n->output(0));
  const std::string text = print_graph(g);
  EXPECT_NE(text.find("graph main(%x: f32[1,3])"), std::string::npos) << text;
  EXPECT_NE(text.find("%w: f32[2,3] = constant 24 bytes"), std::string::npos) << text;
  EXPECT_NE(text.find("= vk.aten.linear.default(%x, %w, None)"), std::string::npos) << text;
}

TEST(Shape, SymbolicDimsAreNotStatic) {
  Shape s({Dim::sym("batch"), Dim::of(3)});
  EXPECT_FALSE(s.is_static());
  EXPECT_EQ(s.str(), "[batch,3]");
  EXPECT_THROW(s.numel(), std::logic_error);
  EXPECT_EQ(Shape::of({2, 3, 4}).numel(), 24);
  EXPECT_EQ(Shape::of({}).numel(), 1);
}

}  // namespace
}  // namespace vkc::ir
