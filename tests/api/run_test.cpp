// vkc::run / vkc::Session execute what vkc::compile produced, from a file or memory, on the cpu
// backend and (where a Vulkan device exists, lavapipe in CI) the vulkan backend.
#include <gtest/gtest.h>

#include "api_test_support.h"
#include "vkc/runtime/vulkan.h"

namespace vkc::test {
namespace {

// y = Relu(x) * w + x, x: [1, 4]; values checked by hand below.
std::vector<uint8_t> relu_mul_add_model() {
  ModelBuilder b;
  b.input("x", kF32, {1, 4});
  b.raw_floats("w", {4}, {1.f, 2.f, 3.f, 4.f});
  b.node("Relu", {"x"}, {"r"}, "relu");
  b.node("Mul", {"r", "w"}, {"m"}, "mul");
  b.node("Add", {"m", "x"}, {"y"}, "add");
  b.output("y", kF32, {1, 4});
  const CompileResult r = compile(b.bytes(), fs::path(), CompileOptions{});
  EXPECT_TRUE(r) << describe(r.diagnostics);
  return r.pte;
}

const std::vector<float> kX = {-2.f, -1.f, 0.5f, 3.f};
const std::vector<float> kY = {-2.f, -1.f, 0.5f * 3.f + 0.5f, 3.f * 4.f + 3.f};

void expect_y(const RunResult& r) {
  ASSERT_TRUE(r) << describe(r.diagnostics);
  ASSERT_EQ(r.outputs.size(), 1u);
  EXPECT_EQ(r.outputs[0].dtype, ir::DType::Float32);
  EXPECT_EQ(r.outputs[0].shape, (std::vector<int64_t>{1, 4}));
  for (size_t i = 0; i < kY.size(); ++i) EXPECT_FLOAT_EQ(r.outputs[0].get_f(static_cast<int64_t>(i)), kY[i]) << i;
}

TEST(ApiRun, InMemoryCompileThenRunGivesTheModelsValues) {
  const std::vector<uint8_t> pte = relu_mul_add_model();
  Session s = Session::open(pte);
  ASSERT_TRUE(s) << describe(s.diagnostics());
  ASSERT_EQ(s.inputs().size(), 1u);
  EXPECT_EQ(s.inputs()[0].shape, (std::vector<int64_t>{1, 4}));
  ASSERT_EQ(s.outputs().size(), 1u);
  const Tensor x = Tensor::of(ir::DType::Float32, {1, 4}, kX);
  expect_y(s.run({x}));
  expect_y(s.run({x}));  // a session runs many times
  // Same elements in another shape are accepted.
  expect_y(s.run({Tensor::of(ir::DType::Float32, {4}, kX)}));
}

TEST(ApiRun, FileAndOneShotRun) {
  TempDir dir;
  write_file(dir / "m.pte", relu_mul_add_model());
  expect_y(run(dir / "m.pte", {Tensor::of(ir::DType::Float32, {1, 4}, kX)}));
}

TEST(ApiRun, AMovedFromSessionIsNotOpen) {
  Session s = Session::open(relu_mul_add_model());
  ASSERT_TRUE(s);
  Session moved = std::move(s);
  EXPECT_TRUE(moved);
  EXPECT_FALSE(s);  // NOLINT(bugprone-use-after-move): the documented moved-from state
  EXPECT_TRUE(s.inputs().empty());
  EXPECT_TRUE(s.diagnostics().empty());
  const RunResult r = s.run({Tensor::of(ir::DType::Float32, {1, 4}, kX)});
  EXPECT_FALSE(r);
  ASSERT_EQ(r.diagnostics.size(), 1u);
  EXPECT_EQ(r.diagnostics[0].message, "the session is not open");
  expect_y(moved.run({Tensor::of(ir::DType::Float32, {1, 4}, kX)}));
}

TEST(ApiRun, BadInputsAreDiagnostics) {
  Session s = Session::open(relu_mul_add_model());
  ASSERT_TRUE(s);
  const RunResult none = s.run({});
  EXPECT_FALSE(none);
  ASSERT_EQ(none.diagnostics.size(), 1u);
  EXPECT_NE(none.diagnostics[0].message.find("takes 1 input(s), 0 given"), std::string::npos)
      << none.diagnostics[0].message;
  const RunResult wrong_dtype = s.run({Tensor::of(ir::DType::Int32, {1, 4}, std::vector<int32_t>{1, 2, 3, 4})});
  EXPECT_FALSE(wrong_dtype);
  EXPECT_NE(describe(wrong_dtype.diagnostics).find("i32 given, the program takes f32"), std::string::npos)
      << describe(wrong_dtype.diagnostics);
  const RunResult wrong_shape = s.run({Tensor::of(ir::DType::Float32, {1, 3}, std::vector<float>{1, 2, 3})});
  EXPECT_FALSE(wrong_shape);
  EXPECT_NE(describe(wrong_shape.diagnostics).find("[1,3] given"), std::string::npos)
      << describe(wrong_shape.diagnostics);
}

TEST(ApiRun, CorruptProgramsUnknownBackendsAndMethodsAreDiagnostics) {
  std::vector<uint8_t> junk(64, 0x5a);
  Session corrupt = Session::open(junk);
  EXPECT_FALSE(corrupt);
  ASSERT_EQ(corrupt.diagnostics().size(), 1u);
  EXPECT_TRUE(corrupt.inputs().empty());
  const RunResult r = corrupt.run({});
  EXPECT_FALSE(r);
  EXPECT_EQ(r.diagnostics, corrupt.diagnostics());

  EXPECT_FALSE(run(fs::path("/nonexistent.pte"), {}));

  RunOptions o;
  o.backend = "tpu";
  Session unknown = Session::open(relu_mul_add_model(), o);
  EXPECT_FALSE(unknown);
  ASSERT_EQ(unknown.diagnostics().size(), 1u);
  EXPECT_NE(unknown.diagnostics()[0].message.find("tpu"), std::string::npos) << unknown.diagnostics()[0].message;

  RunOptions m;
  m.method = "backward";
  Session no_method = Session::open(relu_mul_add_model(), m);
  EXPECT_FALSE(no_method);
  EXPECT_NE(describe(no_method.diagnostics()).find("backward"), std::string::npos) << describe(no_method.diagnostics());
}

TEST(ApiRun, VulkanBackendGivesTheSameValues) {
  if (runtime::vulkan_device_name().empty()) GTEST_SKIP() << "no Vulkan device";
  RunOptions o;
  o.backend = "vulkan";
  Session s = Session::open(relu_mul_add_model(), o);
  ASSERT_TRUE(s) << describe(s.diagnostics());
  expect_y(s.run({Tensor::of(ir::DType::Float32, {1, 4}, kX)}));
}

}  // namespace
}  // namespace vkc::test
