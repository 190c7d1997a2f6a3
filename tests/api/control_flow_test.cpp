// ONNX If: both branches are inlined and each output becomes Where(cond, then, else); the program
// then computes the taken branch's values for either condition. Other control flow is refused.
#include <gtest/gtest.h>

#include "api_test_support.h"
#include "vkc/runtime/vulkan.h"

namespace vkc::test {
namespace {

constexpr int32_t kBool = onnx::TensorProto_DataType_BOOL;

// y = If(c) then { x + one (a branch initializer) } else { x * two (a Constant node) }, x [1, 4]
std::vector<uint8_t> if_model(const char* op_type = "If") {
  ModelBuilder b(8, 13);
  b.input("c", kBool, {});
  b.input("x", kF32, {1, 4});
  b.output("y", kF32, {1, 4});
  auto* n = b.node(op_type, {"c"}, {"y"}, "branch");
  for (const char* branch : {"then_branch", "else_branch"}) {
    auto* a = n->add_attribute();
    a->set_name(branch);
    a->set_type(onnx::AttributeProto_AttributeType_GRAPH);
    onnx::GraphProto* g = a->mutable_g();
    g->set_name(branch);
    const bool then = std::string(branch) == "then_branch";
    auto* k = then ? g->add_initializer() : nullptr;
    if (then) {
      k->set_name("k");
      k->set_data_type(kF32);
      k->add_float_data(1.f);
      auto* add = g->add_node();
      add->set_op_type("Add");
      add->add_input("x");
      add->add_input("k");
      add->add_output("out");
    } else {
      auto* c = g->add_node();
      c->set_op_type("Constant");
      c->add_output("k");
      auto* v = c->add_attribute();
      v->set_name("value");
      v->set_type(onnx::AttributeProto_AttributeType_TENSOR);
      v->mutable_t()->set_data_type(kF32);
      v->mutable_t()->add_float_data(2.f);
      auto* mul = g->add_node();
      mul->set_op_type("Mul");
      mul->add_input("x");
      mul->add_input("k");
      mul->add_output("out");
    }
    ModelBuilder::set_type(g->add_output(), "out", kF32, {1, 4});
  }
  return b.bytes();
}

TEST(ControlFlow, IfRunsTheTakenBranchForEitherCondition) {
  CompileOptions o;
  o.cpu_fallback = true;  // the bool condition may be left to a kernel call; the branches still delegate
  const CompileResult r = compile(if_model(), fs::path(), o);
  ASSERT_TRUE(r) << r.error();
  Session s = Session::open(r.pte);
  ASSERT_TRUE(s) << describe(s.diagnostics());
  const std::vector<float> x = {1.f, -2.f, 3.5f, 0.f};
  for (bool c : {true, false}) {
    const RunResult out =
        s.run({Tensor::of(ir::DType::Bool, {}, std::vector<uint8_t>{c}), Tensor::of(ir::DType::Float32, {1, 4}, x)});
    ASSERT_TRUE(out) << describe(out.diagnostics);
    for (int64_t i = 0; i < 4; ++i)
      EXPECT_FLOAT_EQ(out.outputs.at(0).get_f(i), c ? x[i] + 1.f : x[i] * 2.f) << c << " " << i;
  }
}

// Comparisons, logic and Where: bool tensors (i32 0/1 on the GPU) as inputs, intermediates and outputs.
std::vector<uint8_t> logic_model() {
  ModelBuilder b(8, 13);
  b.input("x", kF32, {2, 3});
  b.input("y", kF32, {1, 3});  // broadcast
  b.input("flag", kBool, {2, 3});
  b.output("picked", kF32, {2, 3});
  b.output("mixed", kBool, {2, 3});
  b.node("Less", {"x", "y"}, {"lt"}, "lt");
  b.node("Equal", {"x", "y"}, {"eq"}, "eq");
  b.node("GreaterOrEqual", {"x", "y"}, {"ge"}, "ge");
  b.node("Not", {"eq"}, {"ne"}, "not");
  b.node("And", {"ge", "ne"}, {"gt"}, "and");
  b.node("Or", {"lt", "flag"}, {"mixed"}, "or");
  b.node("Where", {"gt", "x", "y"}, {"picked"}, "where");
  return b.bytes();
}

TEST(ControlFlow, ComparisonsLogicWhereAndIfOnVulkanMatchCpu) {
  if (runtime::vulkan_device_name().empty()) GTEST_SKIP() << "no Vulkan device";
  const CompileResult logic = compile(logic_model(), fs::path(), CompileOptions{});
  ASSERT_TRUE(logic) << logic.error();
  EXPECT_EQ(logic.partition.rejected, 0u);
  const std::vector<Tensor> ins = {Tensor::of(ir::DType::Float32, {2, 3}, std::vector<float>{1, 2, 3, 4, -5, 6}),
                                   Tensor::of(ir::DType::Float32, {1, 3}, std::vector<float>{2, 2, 2}),
                                   Tensor::of(ir::DType::Bool, {2, 3}, std::vector<uint8_t>{0, 0, 1, 0, 0, 0})};
  RunOptions vk;
  vk.backend = "vulkan";
  const RunResult cpu = vkc::run(logic.pte, ins), gpu = vkc::run(logic.pte, ins, vk);
  ASSERT_TRUE(cpu) << describe(cpu.diagnostics);
  ASSERT_TRUE(gpu) << describe(gpu.diagnostics);
  // max(x, y) where x > y; (x < y) or flag
  const std::vector<float> picked = {2, 2, 3, 4, 2, 6};
  const std::vector<int> mixed = {1, 0, 1, 0, 1, 0};
  for (int64_t i = 0; i < 6; ++i) {
    EXPECT_FLOAT_EQ(gpu.outputs.at(0).get_f(i), picked[i]) << i;
    EXPECT_EQ(gpu.outputs.at(1).dtype, ir::DType::Bool);
    EXPECT_EQ(gpu.outputs.at(1).get_i(i), mixed[i]) << i;
    EXPECT_EQ(cpu.outputs.at(1).get_i(i), mixed[i]) << i;
  }
  CompileOptions o;
  o.cpu_fallback = true;
  const CompileResult branch = compile(if_model(), fs::path(), o);
  ASSERT_TRUE(branch) << branch.error();
  for (uint8_t c : {1, 0}) {
    const RunResult r = vkc::run(branch.pte, {Tensor::of(ir::DType::Bool, {}, std::vector<uint8_t>{c}),
                                              Tensor::of(ir::DType::Float32, {1, 4}, std::vector<float>{1, 2, 3, 4})},
                                 vk);
    ASSERT_TRUE(r) << describe(r.diagnostics);
    EXPECT_FLOAT_EQ(r.outputs.at(0).get_f(3), c ? 5.f : 8.f);
  }
}

TEST(ControlFlow, AScanWithIfsAttributesIsRefusedWithTheReason) {
  // (Loop and Scan of static length are unrolled: tests/compiler/{loop,scan}_unroll_test.cpp.)
  const CompileResult r = compile(if_model("Scan"), fs::path(), CompileOptions{});
  EXPECT_FALSE(r);
  EXPECT_NE(r.error().find("Unrecognized attribute: then_branch for operator Scan"), std::string::npos) << r.error();
}

}  // namespace
}  // namespace vkc::test
