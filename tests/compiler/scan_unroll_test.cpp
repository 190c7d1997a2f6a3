// Scan over a sequence of static length, unrolled at import (onnx_graph_builder.cpp): state values
// chained, scan inputs sliced along their axes (forward and reversed), scan outputs stacked along
// theirs (forward and reversed), as exporters write recurrences; expected values computed here by
// running the recurrence in plain C++, on cpu and Vulkan. Scans it cannot unroll are refused with
// the reason.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "onnx_test_models.h"
#include "vkc/runtime/vulkan.h"
#include "vkc/vkc.h"

namespace vkc::test {
namespace {

using ::testing::HasSubstr;

// s_{t+1} = s_t * w + x_t + z_{T-1-t}  (x [T, 3] scanned forward along axis 0; z [3, T] scanned in
// reverse along axis 1); outputs: the final s, y_t = s_{t+1} * 2 stacked along axis 1 ([3, T]), and
// s_{t+1} stacked in reverse along axis 0 ([T, 3]).
fs::path scan_model(const fs::path& dir, int64_t steps, int64_t opset = 17) {
  ModelBuilder m(8, opset);
  m.input("s0", kF32, {3});
  m.input("x", kF32, {steps, 3});
  m.input("z", kF32, {3, steps});
  m.output("s", kF32, {3});
  m.output("y", kF32, {3, steps});
  m.output("r", kF32, {steps, 3});
  m.raw_floats("w", {3}, {0.5f, -1.0f, 0.25f});
  auto* scan = m.node("Scan", {"s0", "x", "z"}, {"s", "y", "r"}, "scan");
  attr_int(scan, "num_scan_inputs", 2);
  attr_ints(scan, "scan_input_axes", {0, 1});
  attr_ints(scan, "scan_input_directions", {0, 1});
  attr_ints(scan, "scan_output_axes", {1, 0});
  attr_ints(scan, "scan_output_directions", {0, 1});
  auto* a = scan->add_attribute();
  a->set_name("body");
  a->set_type(onnx::AttributeProto_AttributeType_GRAPH);
  auto* g = a->mutable_g();
  g->set_name("body");
  ModelBuilder::set_type(g->add_input(), "s_in", kF32, {3});
  ModelBuilder::set_type(g->add_input(), "x_t", kF32, {3});
  ModelBuilder::set_type(g->add_input(), "z_t", kF32, {3});
  auto node = [&](const char* op, std::vector<std::string> ins, std::string out) {
    auto* nd = g->add_node();
    nd->set_op_type(op);
    for (auto& i : ins) nd->add_input(i);
    nd->add_output(out);
    return nd;
  };
  node("Mul", {"s_in", "w"}, "scaled");
  node("Add", {"scaled", "x_t"}, "sx");
  node("Add", {"sx", "z_t"}, "s_out");
  node("Add", {"s_out", "s_out"}, "y_t");
  node("Identity", {"s_out"}, "r_t");
  ModelBuilder::set_type(g->add_output(), "s_out", kF32, {3});
  ModelBuilder::set_type(g->add_output(), "y_t", kF32, {3});
  ModelBuilder::set_type(g->add_output(), "r_t", kF32, {3});
  return m.save(dir / "scan.onnx");
}

TEST(ScanUnroll, StaticLengthComputesTheRecurrence) {
  TempDir dir;
  const int64_t T = 5;
  const CompileResult r = compile(scan_model(dir.path(), T), CompileOptions{});
  ASSERT_TRUE(r.ok) << r.error();
  const std::vector<float> s0 = {1, -2, 0.5f}, w = {0.5f, -1.0f, 0.25f};
  std::vector<float> x(T * 3), z(3 * T);
  for (size_t i = 0; i < x.size(); ++i) x[i] = 0.1f * float(i) - 0.7f;
  for (size_t i = 0; i < z.size(); ++i) z[i] = 0.3f - 0.05f * float(i);
  std::vector<float> s = s0, y(3 * T), rev(T * 3);
  for (int64_t t = 0; t < T; ++t) {
    for (int64_t c = 0; c < 3; ++c) {
      s[c] = s[c] * w[c] + x[t * 3 + c] + z[c * T + (T - 1 - t)];
      y[c * T + t] = 2 * s[c];
      rev[(T - 1 - t) * 3 + c] = s[c];
    }
  }
  for (const std::string backend : {"cpu", "vulkan"}) {
    if (backend == "vulkan" && runtime::vulkan_device_name().empty()) continue;
    RunOptions ro;
    ro.backend = backend;
    const RunResult out = run(std::span<const uint8_t>(r.pte),
                              {Tensor::of(ir::DType::Float32, {3}, s0), Tensor::of(ir::DType::Float32, {T, 3}, x),
                               Tensor::of(ir::DType::Float32, {3, T}, z)},
                              ro);
    ASSERT_TRUE(out.ok) << backend;
    ASSERT_EQ(out.outputs.size(), 3u);
    EXPECT_EQ(out.outputs[1].shape, (std::vector<int64_t>{3, T}));
    EXPECT_EQ(out.outputs[2].shape, (std::vector<int64_t>{T, 3}));
    for (int64_t k = 0; k < 3; ++k) EXPECT_NEAR(out.outputs[0].get_f(k), s[k], 1e-5) << backend;
    for (int64_t k = 0; k < 3 * T; ++k) {
      EXPECT_NEAR(out.outputs[1].get_f(k), y[k], 1e-5) << backend << " y " << k;
      EXPECT_NEAR(out.outputs[2].get_f(k), rev[k], 1e-5) << backend << " r " << k;
    }
  }
}

TEST(ScanUnroll, ScansThatCannotBeUnrolledAreRefused) {
  TempDir dir;
  const CompileResult huge = compile(scan_model(dir.path(), 100000), CompileOptions{});
  ASSERT_FALSE(huge.ok);
  EXPECT_THAT(huge.error(), HasSubstr("exceed the unrolling bound"));
  const CompileResult old = compile(scan_model(dir.path(), 3, 8), CompileOptions{});
  ASSERT_FALSE(old.ok);
  EXPECT_THAT(old.error(), HasSubstr("Scan"));
}

}  // namespace
}  // namespace vkc::test
