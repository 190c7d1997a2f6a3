// ONNX If: both branches are inlined and each output becomes Where(cond, then, else); the program
// then computes the taken branch's values for either condition. Other control flow is refused.
#include <gtest/gtest.h>

#include "api_test_support.h"

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
  std::string s;
  EXPECT_TRUE(b.model.SerializeToString(&s));
  return {s.begin(), s.end()};
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

TEST(ControlFlow, LoopIsRefusedWithTheReason) {
  const CompileResult r = compile(if_model("Loop"), fs::path(), CompileOptions{});
  EXPECT_FALSE(r);
  EXPECT_NE(r.error().find("subgraph attributes are not supported (only If's branches are)"), std::string::npos)
      << r.error();
}

}  // namespace
}  // namespace vkc::test
