#include <gtest/gtest.h>

#include <map>

#include "common/graph_builder.h"
#include "vkc/ir/verifier.h"
#include "vkc/partitioner/partition.h"

namespace vkc::partitioner {
namespace {
using testing::f32;

const ir::TensorRep kTexC{ir::Storage::Texture3D, ir::Layout::ChannelsPacked};
const ir::TensorRep kTexW{ir::Storage::Texture3D, ir::Layout::WidthPacked};

ir::Node* conv(ir::Graph& g, ir::Value* x, int64_t c) {
  ir::Value* w = testing::constant(g, g.unique_name("w"), {c, c, 1, 1}, std::vector<float>(c * c, 0.5f));
  auto shape = x->shape().sizes();
  return testing::runtime(g, "aten.convolution.default", {x, w, nullptr}, {f32(shape)},
                          {{"stride", std::vector<int64_t>{1, 1}},
                           {"padding", std::vector<int64_t>{0, 0}},
                           {"dilation", std::vector<int64_t>{1, 1}},
                           {"transposed", false},
                           {"output_padding", std::vector<int64_t>{0, 0}},
                           {"groups", int64_t{1}}});
}

ir::Node* relu(ir::Graph& g, ir::Value* x) { return testing::runtime(g, "aten.relu.default", {x}, {x->type()}); }

TEST(Partition, AChainBecomesOneDelegateWithTaggedTensors) {
  ir::Graph g;
  ir::Value* x = testing::input(g, "x", f32({1, 8, 4, 4}));
  ir::Node* c1 = conv(g, x, 8);
  ir::Node* r = relu(g, c1->output(0));
  ir::Node* c2 = conv(g, r->output(0), 8);
  g.outputs.push_back(c2->output(0));
  Partition p = partition_graph(g, {});
  ASSERT_EQ(p.delegates.size(), 1u);
  EXPECT_EQ(p.num_rejected(), 0u);
  const Delegate& d = p.delegates[0];
  EXPECT_EQ(d.inputs, std::vector<ir::Value*>{x});
  EXPECT_EQ(d.outputs, std::vector<ir::Value*>{c2->output(0)});
  // relu takes its input's (conv's) representation: no transition needed.
  EXPECT_EQ(d.nodes.size(), 3u);
  for (const ir::Value* v : {x, c1->output(0), r->output(0), c2->output(0)}) EXPECT_EQ(d.placement.at(v).rep, kTexC);
  EXPECT_TRUE(ir::verify(g).empty());
}

TEST(Partition, MemoryPlanSharesObjectsBetweenTensorsWhoseLifetimesDoNotOverlap) {
  ir::Graph g;
  ir::Value* x = testing::input(g, "x", f32({1, 4, 4, 4}));
  ir::Value* v = x;
  std::vector<ir::Value*> chain;
  for (int i = 0; i < 5; ++i) {
    v = relu(g, v)->output(0);
    chain.push_back(v);
  }
  g.outputs.push_back(v);
  Partition p = partition_graph(g, {});
  const Delegate& d = p.delegates[0];
  // Inputs and outputs are planned too; a chain needs only a few objects in turn. The input keeps
  // its object for the whole delegate (its value stays through the call): no later tensor takes it.
  EXPECT_GE(d.placement.at(x).mem_obj_id, 0);
  EXPECT_EQ(d.num_memory_objects, 3);
  for (ir::Value* c : chain) EXPECT_NE(d.placement.at(c).mem_obj_id, d.placement.at(x).mem_obj_id);
  for (size_t i = 1; i < chain.size(); ++i)
    EXPECT_NE(d.placement.at(chain[i]).mem_obj_id, d.placement.at(chain[i - 1]).mem_obj_id);
  EXPECT_EQ(d.placement.at(chain[0]).mem_obj_id, d.placement.at(chain[2]).mem_obj_id);
}

TEST(Partition, AViewsInputOutlivesTheCloneThatAloneReadsTheView) {
  // relu -> view -> clone: the runtime runs the view and the clone after it as one dispatch,
  // which reads the relu's output while writing the clone's, of another shape: they get
  // different memory objects. Element-for-element chains still take turns (test above).
  ir::Graph g;
  ir::Value* x = testing::input(g, "x", f32({1, 4, 4, 4}));
  ir::Value* r = relu(g, x)->output(0);
  ir::Node* view = testing::runtime(g, "aten.view_copy.default", {r}, {f32({1, 64})});
  view->attrs() = {{"size", std::vector<int64_t>{1, 64}}};
  ir::Value* o = testing::runtime(g, "aten.clone.default", {view->output(0)}, {f32({1, 64})})->output(0);
  ir::Value* out = relu(g, o)->output(0);
  g.outputs.push_back(out);
  Partition p = partition_graph(g, {});
  ASSERT_EQ(p.delegates.size(), 1u);
  const Delegate& d = p.delegates[0];
  EXPECT_NE(d.placement.at(r).mem_obj_id, d.placement.at(o).mem_obj_id);
}

TEST(Partition, ALinearsInputOutlivesTheViewThatAloneReadsItsOutput) {
  // relu -> linear -> view: on a GPU the matrix-vector linear writes the view's tensor while it
  // reads the relu's output (a decode step's projection split into heads): the relu's output,
  // last read by the linear, still gets another memory object than the view's output.
  ir::Graph g;
  ir::Value* x = testing::input(g, "x", f32({1, 1, 64}));
  ir::Value* r = relu(g, x)->output(0);
  ir::Value* w = testing::constant(g, "w", {32, 64}, std::vector<float>(32 * 64, 0.5f));
  ir::Value* y = testing::runtime(g, "aten.linear.default", {r, w, nullptr}, {f32({1, 1, 32})})->output(0);
  ir::Node* view = testing::runtime(g, "aten.view_copy.default", {y}, {f32({1, 1, 4, 8})});
  view->attrs() = {{"size", std::vector<int64_t>{1, 1, 4, 8}}};
  ir::Value* out = relu(g, view->output(0))->output(0);
  g.outputs.push_back(out);
  Partition p = partition_graph(g, {});
  ASSERT_EQ(p.delegates.size(), 1u);
  const Delegate& d = p.delegates[0];
  EXPECT_NE(d.placement.at(r).mem_obj_id, d.placement.at(view->output(0)).mem_obj_id);
}

// x -> relu -> rms_norm in `g`: the relu's output and the norm.
std::pair<ir::Value*, ir::Node*> relu_then_rms_norm(ir::Graph& g) {
  ir::Value* x = testing::input(g, "x", f32({1, 1, 64}));
  ir::Value* r = relu(g, x)->output(0);
  ir::Value* gamma = testing::constant(g, "gamma", {64}, std::vector<float>(64, 1.0f));
  ir::Node* norm = testing::runtime(g, "et_vk.rms_norm.default", {r, gamma}, {f32({1, 1, 64})});
  norm->attrs() = {{"eps", 1e-6}};
  return {r, norm};
}

TEST(Partition, AnRmsNormsInputOutlivesTheLinearsThatRunTheNorm) {
  // relu -> rms_norm -> linear (a decode step's final norm and head): on a GPU the linear runs the
  // norm on the relu's output as it writes its own, so the two never share memory, though nothing
  // reads the relu's output after the norm. A norm that a non-linear reads keeps the plain plan.
  for (bool to_linear : {true, false}) {
    ir::Graph g;
    const auto [r, norm] = relu_then_rms_norm(g);
    ir::Value* out;
    if (to_linear) {
      ir::Value* w = testing::constant(g, "w", {64, 64}, std::vector<float>(64 * 64, 0.5f));
      out = testing::runtime(g, "aten.linear.default", {norm->output(0), w, nullptr}, {f32({1, 1, 64})})->output(0);
    } else {
      out = relu(g, norm->output(0))->output(0);
    }
    g.outputs.push_back(out);
    Partition p = partition_graph(g, {});
    ASSERT_EQ(p.delegates.size(), 1u);
    const Delegate& d = p.delegates[0];
    if (to_linear) EXPECT_NE(d.placement.at(r).mem_obj_id, d.placement.at(out).mem_obj_id);
    else EXPECT_EQ(d.placement.at(r).mem_obj_id, d.placement.at(out).mem_obj_id);
  }
}

TEST(Partition, AnRmsNormsInputOutlivesThe8da4wLinearsThatQuantizeTheNormsRows) {
  // relu -> rms_norm -> choose_qparams -> linear_dq8ca (an 8da4w decode step's final norm and
  // head): on a GPU the linear computes the rows' parameters and runs the norm as it writes its
  // output, so the relu's output lives until the linear: nothing defined after the norm takes its
  // memory.
  ir::Graph g;
  const auto [r, norm] = relu_then_rms_norm(g);
  ir::Node* q = testing::runtime(g, "torchao.choose_qparams_affine.default", {norm->output(0)},
                                 {f32({1, 1, 1}), ir::TensorType{ir::DType::Int32, ir::Shape::of({1, 1, 1})}});
  ir::Value* w = testing::constant(g, "w", {64, 64}, std::vector<float>(64 * 64, 0.5f));
  ir::Value* out = testing::runtime(g, "et_vk.linear_dq8ca_q4gsw.default",
                                    {norm->output(0), q->output(0), q->output(1), w}, {f32({1, 1, 64})})
                       ->output(0);
  g.outputs.push_back(out);
  Partition p = partition_graph(g, {});
  ASSERT_EQ(p.delegates.size(), 1u);
  const Delegate& d = p.delegates[0];
  for (const ir::Value* v : {q->output(0), q->output(1), out})
    EXPECT_NE(d.placement.at(r).mem_obj_id, d.placement.at(v).mem_obj_id);
}

TEST(Partition, SkipMemoryPlanningLeavesEveryTensorInItsOwnMemory) {
  ir::Graph g;
  ir::Value* x = testing::input(g, "x", f32({1, 4, 4, 4}));
  ir::Node* r1 = relu(g, x);
  ir::Node* r2 = relu(g, r1->output(0));
  g.outputs.push_back(r2->output(0));
  PartitionOptions o;
  o.skip_memory_planning = true;
  Partition p = partition_graph(g, o);
  for (const auto& [value, placement] : p.delegates[0].placement) EXPECT_EQ(placement.mem_obj_id, -1);
  EXPECT_EQ(p.delegates[0].num_memory_objects, 0);
}

TEST(Partition, ConstantsOfOpsThatDoNotPrepackGetAPrepackNode) {
  ir::Graph g;
  ir::Value* x = testing::input(g, "x", f32({1, 4}));
  ir::Value* bias = testing::constant(g, "bias", {1, 4}, {1, 2, 3, 4});
  ir::Node* add1 = testing::runtime(g, "aten.add.Tensor", {x, bias}, {f32({1, 4})});
  ir::Node* add2 = testing::runtime(g, "aten.add.Tensor", {add1->output(0), bias}, {f32({1, 4})});
  g.outputs.push_back(add2->output(0));
  Partition p = partition_graph(g, {});
  const Delegate& d = p.delegates[0];
  ASSERT_EQ(d.nodes.size(), 3u);
  EXPECT_EQ(d.nodes[0]->op_type(), "et_vk.prepack.default");
  EXPECT_EQ(d.nodes[0]->input(0), bias);
  // Shared by both adds, memory of its own.
  EXPECT_EQ(add1->input(1), d.nodes[0]->output(0));
  EXPECT_EQ(add2->input(1), d.nodes[0]->output(0));
  EXPECT_EQ(d.placement.at(d.nodes[0]->output(0)).mem_obj_id, -1);
}

TEST(Partition, SelfPrepackingOpsTakeConstantsDirectly) {
  ir::Graph g;
  ir::Value* x = testing::input(g, "x", f32({1, 4, 2, 2}));
  ir::Node* c = conv(g, x, 4);
  g.outputs.push_back(c->output(0));
  Partition p = partition_graph(g, {});
  EXPECT_EQ(p.delegates[0].nodes.size(), 1u);
  EXPECT_TRUE(c->input(1)->is_constant());
}

TEST(Partition, ConflictingLayoutsGetACloneTransition) {
  ir::Graph g;
  ir::Value* x = testing::input(g, "x", f32({1, 8, 2, 2}));
  ir::Node* c = conv(g, x, 8);  // channels-packed texture
  ir::Node* view = testing::runtime(g, "aten.view_copy.default", {c->output(0)}, {f32({1, 32})},
                                    {{"size", std::vector<int64_t>{1, 32}}});
  ir::Value* w = testing::constant(g, "fc", {3, 32}, std::vector<float>(96, 0.1f));
  ir::Node* lin = testing::runtime(g, "aten.linear.default", {view->output(0), w, nullptr}, {f32({1, 3})});
  g.outputs.push_back(lin->output(0));
  Partition p = partition_graph(g, {});
  const Delegate& d = p.delegates[0];
  // view keeps channels-packed; linear needs width-packed, so a clone converts.
  ASSERT_EQ(d.nodes.size(), 4u);
  EXPECT_EQ(d.nodes[2]->op_type(), "aten.clone.default");
  EXPECT_EQ(lin->input(0), d.nodes[2]->output(0));
  EXPECT_EQ(d.placement.at(view->output(0)).rep, kTexC);
  EXPECT_EQ(d.placement.at(d.nodes[2]->output(0)).rep, kTexW);
  EXPECT_TRUE(ir::verify(g).empty());
}

TEST(Partition, SmallTextureLimitsRejectWithTheReasonAndSplitDelegates) {
  ir::Graph g;
  ir::Value* x = testing::input(g, "x", f32({1, 4, 4, 4000}));
  ir::Node* r = relu(g, x);  // fits as a width-packed texture (x = 1000)
  // avg_pool2d needs a channels-packed texture: x = 4000 > 2048 under the small limits only
  ir::Node* pool = testing::runtime(g, "aten.avg_pool2d.default", {r->output(0)}, {f32({1, 4, 4, 4000})},
                                    {{"kernel_size", std::vector<int64_t>{1, 1}},
                                     {"stride", std::vector<int64_t>{1, 1}},
                                     {"padding", std::vector<int64_t>{0, 0}}});
  ir::Node* r2 = relu(g, pool->output(0));
  g.outputs.push_back(r2->output(0));
  PartitionOptions small;
  small.limits = DeviceLimits::small_texture();
  Partition p = partition_graph(g, small);
  ASSERT_EQ(p.decisions.size(), 3u);
  EXPECT_EQ(p.decisions[0].delegate, 0);
  EXPECT_EQ(p.decisions[1].delegate, -1);
  EXPECT_NE(p.decisions[1].reason.find("texture extent x=4000 > 2048 (small-texture)"), std::string::npos)
      << p.decisions[1].reason;
  EXPECT_EQ(p.decisions[2].delegate, 1);
  ASSERT_EQ(p.delegates.size(), 2u);
  EXPECT_EQ(p.delegates[0].placement.at(r->output(0)).rep, kTexW);
  EXPECT_EQ(p.delegates[0].outputs, std::vector<ir::Value*>{r->output(0)});
  EXPECT_EQ(p.delegates[1].inputs, std::vector<ir::Value*>{pool->output(0)});

  Partition default_limits = partition_graph(g, {});
  EXPECT_EQ(default_limits.num_rejected(), 0u);
  EXPECT_EQ(default_limits.delegates.size(), 1u);
}

TEST(Partition, IndependentBranchesShareADelegateAcrossANodeLeftOut) {
  // x -> relu_a -> erf (left out) -> relu_c ;  x -> relu_b (independent of erf)
  // relu_a and relu_b can share a delegate; relu_c cannot join it (the path leaves through erf).
  ir::Graph g;
  ir::Value* x = testing::input(g, "x", f32({1, 4}));
  ir::Node* a = relu(g, x);
  ir::Node* erf = testing::onnx(g, "Erf", {a->output(0)}, f32({1, 4}));
  ir::Node* b = relu(g, x);
  ir::Node* c = relu(g, erf->output(0));
  g.outputs = {b->output(0), c->output(0)};
  Partition p = partition_graph(g, {});
  ASSERT_EQ(p.delegates.size(), 2u);
  EXPECT_EQ(p.decisions[0].delegate, 0);  // relu_a
  EXPECT_EQ(p.decisions[2].delegate, 0);  // relu_b joins relu_a's delegate
  EXPECT_EQ(p.decisions[3].delegate, 1);  // relu_c
}

TEST(Partition, ANodeReachingTheGroupThroughAnOutsideNodeDoesNotJoinIt) {
  // a -> erf -> d, and a -> d directly: d may not join a's delegate (erf sits on a path between them).
  ir::Graph g;
  ir::Value* x = testing::input(g, "x", f32({1, 4}));
  ir::Node* a = relu(g, x);
  ir::Node* erf = testing::onnx(g, "Erf", {a->output(0)}, f32({1, 4}));
  ir::Node* d = testing::runtime(g, "aten.add.Tensor", {a->output(0), erf->output(0)}, {f32({1, 4})});
  g.outputs = {d->output(0)};
  Partition p = partition_graph(g, {});
  ASSERT_EQ(p.delegates.size(), 2u);
  EXPECT_NE(p.decisions[0].delegate, p.decisions[2].delegate);
}

TEST(Partition, AGroupThatReachesTheNodesProducersIsNotJoinedEither) {
  // c1 -> erf1 -> h2 puts c1's group before h2's. h1 joins h2's group (independent of c1); n reads
  // h1 and erf2(h1), so h1's group is tainted for n. Joining c1's group instead (it reaches n by no
  // path) would contract into a cycle: c1's group -> h2's group (h2) -> c1's group (h1 -> n).
  ir::Graph g;
  ir::Value* x = testing::input(g, "x", f32({1, 4}));
  ir::Node* c1 = relu(g, x);
  ir::Node* erf1 = testing::onnx(g, "Erf", {c1->output(0)}, f32({1, 4}));
  ir::Node* h2 = relu(g, erf1->output(0));
  ir::Node* h1 = relu(g, x);
  ir::Node* erf2 = testing::onnx(g, "Erf", {h1->output(0)}, f32({1, 4}));
  ir::Node* n = testing::runtime(g, "aten.add.Tensor", {h1->output(0), erf2->output(0)}, {f32({1, 4})});
  g.outputs = {h2->output(0), n->output(0)};
  Partition p = partition_graph(g, {});
  // The delegates, contracted, must have an order: none may feed one that feeds it.
  std::map<const ir::Node*, int> delegate_of;
  for (size_t d = 0; d < p.delegates.size(); ++d)
    for (const ir::Node* m : p.delegates[d].nodes) delegate_of[m] = static_cast<int>(d);
  ASSERT_TRUE(delegate_of.count(c1) && delegate_of.count(n) && delegate_of.count(h2));
  EXPECT_NE(delegate_of[n], delegate_of[c1]);
  EXPECT_NE(delegate_of[h2], delegate_of[c1]);
}

TEST(Partition, UnloweredNodesCarryTheLoweringReason) {
  ir::Graph g;
  ir::Value* x = testing::input(g, "x", f32({2}));
  ir::Node* erf = testing::onnx(g, "Erf", {x}, f32({2}));
  g.outputs.push_back(erf->output(0));
  Partition p = partition_graph(g, {}, {{erf->name(), "no Vulkan lowering for Erf"}});
  EXPECT_EQ(p.num_rejected(), 1u);
  EXPECT_EQ(p.decisions[0].reason, "no Vulkan lowering for Erf");
  EXPECT_TRUE(p.delegates.empty());
}

}  // namespace
}  // namespace vkc::partitioner
