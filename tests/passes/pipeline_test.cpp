#include <gtest/gtest.h>

#include "common/graph_builder.h"
#include "vkc/passes/pipeline.h"

namespace vkc::passes {
namespace {
using testing::f32;

TEST(Pipeline, DeclaresUniquelyNamedPassesInOrder) {
  const auto& p = pipeline();
  ASSERT_GE(p.size(), 4u);
  for (size_t i = 0; i < p.size(); ++i) {
    EXPECT_FALSE(p[i].summary.empty());
    EXPECT_EQ(find_pass(p[i].name), &p[i]);
  }
  EXPECT_EQ(find_pass("no-such-pass"), nullptr);
}

TEST(Pipeline, RunsEveryPassAndReportsEachToTheHook) {
  ir::Graph g;
  ir::Value* x = testing::input(g, "x", f32({1, 4}));
  ir::Node* relu = testing::onnx(g, "Relu", {x}, f32({1, 4}));
  ir::Node* id = testing::onnx(g, "Identity", {relu->output(0)}, f32({1, 4}));
  ir::Node* sm = testing::onnx(g, "Softmax", {id->output(0)}, f32({1, 4}), {{"axis", int64_t{1}}});
  g.outputs.push_back(sm->output(0));
  PassContext ctx;
  std::vector<std::string> seen;
  PipelineHooks hooks;
  hooks.after_pass = [&](const PassInfo& p, const ir::Graph&) { seen.emplace_back(p.name); };
  run_pipeline(g, ctx, hooks);
  EXPECT_EQ(seen.size(), pipeline().size());
  ASSERT_EQ(g.num_nodes(), 2u);
  EXPECT_EQ(g.nodes()[0]->op_type(), "aten.relu.default");
  EXPECT_EQ(g.nodes()[1]->op_type(), "aten._softmax.default");
  EXPECT_TRUE(ctx.not_lowered.empty());
}

TEST(Pipeline, AFailingPassIsNamed) {
  ir::Graph g;
  ir::Value* x = testing::input(g, "x", f32({2}));
  ir::Node* n = testing::onnx(g, "Relu", {x}, f32({2}));
  g.outputs.push_back(n->output(0));
  g.outputs.push_back(g.add_value("dangling", f32({2})));  // the verifier rejects this after the first pass
  PassContext ctx;
  try {
    run_pipeline(g, ctx);
    FAIL() << "expected PassError";
  } catch (const PassError& e) {
    EXPECT_NE(std::string(e.what()).find("pass 'remove-identity'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("dangling"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace vkc::passes
