// Loop with a constant trip count, unrolled at import (onnx_graph_builder.cpp): carried values,
// scan outputs, the iteration number and outer-scope values, as exporters write a `for` loop;
// expected values computed here by running the loop in plain C++. Loops it cannot unroll exactly
// (computed trip count or condition, too many iterations) are refused with the reason.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "onnx_test_models.h"
#include "vkc/runtime/vulkan.h"
#include "vkc/vkc.h"

namespace vkc::test {
namespace {

using ::testing::HasSubstr;

onnx::GraphProto* add_body(onnx::NodeProto* loop) {
  auto* a = loop->add_attribute();
  a->set_name("body");
  a->set_type(onnx::AttributeProto_AttributeType_GRAPH);
  auto* g = a->mutable_g();
  g->set_name("body");
  return g;
}

// acc_{i+1} = acc_i * w + i (w an outer value, i the iteration number), and the scan output
// acc_{i+1} stacked: a loop of `trips` iterations over x [2, 3], cond given or not.
fs::path loop_model(const fs::path& dir, int64_t trips, bool computed_cond = false) {
  ModelBuilder m(8, 17);
  m.input("x", kF32, {2, 3});
  m.output("acc", kF32, {2, 3});
  m.output("all", kF32, {trips, 2, 3});
  m.raw_floats("w", {3}, {0.5f, -1.0f, 2.0f});
  auto* t = m.initializer("M", onnx::TensorProto_DataType_INT64, {});
  t->add_int64_data(trips);
  auto* c = m.initializer("cond", onnx::TensorProto_DataType_BOOL, {});
  c->add_int32_data(1);
  auto* loop = m.node("Loop", {"M", "cond", "x"}, {"acc", "all"}, "loop");
  auto* g = add_body(loop);
  ModelBuilder::set_type(g->add_input(), "i", onnx::TensorProto_DataType_INT64, {});
  ModelBuilder::set_type(g->add_input(), "c_in", onnx::TensorProto_DataType_BOOL, {});
  ModelBuilder::set_type(g->add_input(), "a_in", kF32, {2, 3});
  auto node = [&](const char* op, std::vector<std::string> ins, std::string out) {
    auto* n = g->add_node();
    n->set_op_type(op);
    for (auto& i : ins) n->add_input(i);
    n->add_output(out);
    return n;
  };
  node("Mul", {"a_in", "w"}, "scaled");
  attr_int(node("Cast", {"i"}, "i_f"), "to", kF32);
  node("Add", {"scaled", "i_f"}, "a_out");
  node("Identity", {"a_out"}, "scan");
  if (computed_cond) {
    node("ReduceSum", {"a_out"}, "total");
    auto* zero = g->add_initializer();
    zero->set_name("zero");
    zero->set_data_type(kF32);
    zero->add_float_data(0.0f);
    node("Less", {"total", "zero"}, "c_out");
  } else {
    node("Identity", {"c_in"}, "c_out");
  }
  ModelBuilder::set_type(g->add_output(), "c_out", onnx::TensorProto_DataType_BOOL, {});
  ModelBuilder::set_type(g->add_output(), "a_out", kF32, {2, 3});
  ModelBuilder::set_type(g->add_output(), "scan", kF32, {2, 3});
  return m.save(dir / "loop.onnx");
}

TEST(LoopUnroll, ConstantTripCountComputesTheLoop) {
  TempDir dir;
  const int64_t trips = 4;
  const CompileResult r = compile(loop_model(dir.path(), trips), CompileOptions{});
  ASSERT_TRUE(r.ok) << r.error();
  const std::vector<float> x = {1, -2, 3, 0.5f, 4, -1}, w = {0.5f, -1.0f, 2.0f};
  std::vector<float> acc = x, all;
  for (int64_t i = 0; i < trips; ++i) {
    for (size_t k = 0; k < acc.size(); ++k) acc[k] = acc[k] * w[k % 3] + static_cast<float>(i);
    all.insert(all.end(), acc.begin(), acc.end());
  }
  for (const std::string backend : {"cpu", "vulkan"}) {
    if (backend == "vulkan" && runtime::vulkan_device_name().empty()) continue;
    RunOptions ro;
    ro.backend = backend;
    const RunResult out = run(std::span<const uint8_t>(r.pte), {Tensor::of(ir::DType::Float32, {2, 3}, x)}, ro);
    ASSERT_TRUE(out.ok) << backend;
    ASSERT_EQ(out.outputs.size(), 2u);
    EXPECT_EQ(out.outputs[1].shape, (std::vector<int64_t>{trips, 2, 3}));
    for (size_t k = 0; k < acc.size(); ++k) EXPECT_NEAR(out.outputs[0].get_f(static_cast<int64_t>(k)), acc[k], 1e-5) << backend;
    for (size_t k = 0; k < all.size(); ++k) EXPECT_NEAR(out.outputs[1].get_f(static_cast<int64_t>(k)), all[k], 1e-5) << backend;
  }
}

TEST(LoopUnroll, LoopsThatCannotBeUnrolledExactlyAreRefused) {
  TempDir dir;
  const CompileResult computed = compile(loop_model(dir.path(), 3, true), CompileOptions{});
  ASSERT_FALSE(computed.ok);
  EXPECT_THAT(computed.error(), HasSubstr("the body computes its condition (a while loop): not unrolled"));
  const CompileResult huge = compile(loop_model(dir.path(), 1000000), CompileOptions{});
  ASSERT_FALSE(huge.ok);
  EXPECT_THAT(huge.error(), HasSubstr("exceed the unrolling bound"));
}

}  // namespace
}  // namespace vkc::test
