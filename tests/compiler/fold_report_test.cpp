// What constant folding leaves to run time is reported with the reason, in the node's lowering
// reason (the partition report's, and the compile error's): a shape computation that reads a graph
// input, and one whose result would exceed the folding size cap.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "onnx_test_models.h"
#include "vkc/vkc.h"

namespace vkc::test {
namespace {

using ::testing::HasSubstr;

TEST(FoldReport, ShapeArithmeticLeftToRunTimeSaysWhy) {
  TempDir dir;
  ModelBuilder m(8, 13);
  m.input("shape", onnx::TensorProto_DataType_INT64, {2});
  m.output("y", kF32, {"a", "b"});
  m.node("ConstantOfShape", {"shape"}, {"y"}, "fill");
  CompileOptions o;
  const CompileResult r = compile(m.save(dir.path() / "fill.onnx"), o);
  ASSERT_FALSE(r.ok);
  EXPECT_THAT(r.error(), HasSubstr("node 'fill' (ConstantOfShape)"));
  EXPECT_THAT(r.error(), HasSubstr("(not folded: it reads graph input 'shape')"));
}

TEST(FoldReport, TheFoldingCapIsNamed) {
  TempDir dir;
  ModelBuilder m(8, 13);
  m.input("x", kF32, {1});
  m.output("y", kF32, {4096, 4096});
  auto* shape = m.initializer("s", onnx::TensorProto_DataType_INT64, {2});
  shape->add_int64_data(4096);
  shape->add_int64_data(4096);
  m.node("ConstantOfShape", {"s"}, {"big"}, "fill");
  m.node("Add", {"big", "x"}, {"y"}, "add");
  const CompileResult r = compile(m.save(dir.path() / "big.onnx"), CompileOptions{});
  // 16M elements from 2: not folded (computed at run time, where a lowering exists).
  for (const auto& n : r.partition.nodes) {
    if (n.name == "fill") {
      EXPECT_THAT(n.reason, HasSubstr("not folded: a tensor of shape [4096,4096] would take more than")) << n.reason;
    }
  }
}

}  // namespace
}  // namespace vkc::test
