// Operators whose ONNX form changed between opsets 7 and 21 (attributes that became inputs,
// semantics that changed), each built node for node in its old and its new form and computed on
// the cpu and Vulkan backends against a reference computed here in plain C++.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>

#include "onnx_test_models.h"
#include "vkc/runtime/vulkan.h"
#include "vkc/vkc.h"

namespace vkc::test {
namespace {

constexpr int32_t kI64 = onnx::TensorProto_DataType_INT64;

std::vector<float> iota_floats(size_t n, float scale = 0.25f, float offset = -1.0f) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = offset + scale * float(i);
  return v;
}

void ints(ModelBuilder& m, const std::string& name, const std::vector<int64_t>& values) {
  auto* t = m.initializer(name, kI64, {int64_t(values.size())});
  for (int64_t v : values) t->add_int64_data(v);
}

// One model: input x (f32, `shape`) -> `build` adds nodes ending in output "y" of `out_shape`.
// Compiled at `opset` and run on every backend; each result must be `want` within 1e-5.
void expect_form(const std::string& what, int64_t opset, const std::vector<int64_t>& shape,
                 const std::vector<int64_t>& out_shape, const std::function<void(ModelBuilder&)>& build,
                 const std::vector<float>& want) {
  SCOPED_TRACE(what + " at opset " + std::to_string(opset));
  ModelBuilder m(opset >= 15 ? 8 : 7, opset);
  std::vector<DimSpec> in_dims(shape.begin(), shape.end()), out_dims(out_shape.begin(), out_shape.end());
  m.input("x", kF32, in_dims);
  m.output("y", kF32, out_dims);
  build(m);
  const auto bytes = m.bytes();
  const CompileResult r = compile(std::span<const uint8_t>(bytes), fs::path(), CompileOptions{});
  ASSERT_TRUE(r.ok) << r.error();
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  const auto x = iota_floats(static_cast<size_t>(n));
  for (const char* backend : {"cpu", "vulkan"}) {
    if (std::string(backend) == "vulkan" && runtime::vulkan_device_name().empty()) continue;
    RunOptions ro;
    ro.backend = backend;
    const RunResult out = run(std::span<const uint8_t>(r.pte), {Tensor::of(ir::DType::Float32, shape, x)}, ro);
    ASSERT_TRUE(out.ok) << backend;
    ASSERT_EQ(out.outputs.at(0).shape, out_shape) << backend;
    ASSERT_EQ(static_cast<size_t>(out.outputs[0].numel()), want.size()) << backend;
    for (size_t i = 0; i < want.size(); ++i)
      EXPECT_NEAR(out.outputs[0].get_f(static_cast<int64_t>(i)), want[i], 1e-5) << backend << " element " << i;
  }
}

TEST(OpsetForms, ClipBoundsAsAttributesThenAsInputs) {
  const auto x = iota_floats(12);
  std::vector<float> want;
  for (float v : x) want.push_back(std::clamp(v, -0.5f, 0.75f));
  expect_form("Clip min/max attributes", 6, {3, 4}, {3, 4}, [](ModelBuilder& m) {
    auto* n = m.node("Clip", {"x"}, {"y"}, "clip");
    attr_float(n, "min", -0.5f);
    attr_float(n, "max", 0.75f);
  }, want);
  for (int64_t opset : {11, 13}) {
    expect_form("Clip min/max inputs", opset, {3, 4}, {3, 4}, [](ModelBuilder& m) {
      m.raw_floats("lo", {}, {-0.5f});
      m.raw_floats("hi", {}, {0.75f});
      m.node("Clip", {"x", "lo", "hi"}, {"y"}, "clip");
    }, want);
  }
}

TEST(OpsetForms, ReduceSumAxesAsAttributeThenAsInput) {
  // Sum over axis 1 of [2, 3, 2], keepdims 0.
  const auto x = iota_floats(12);
  std::vector<float> want(4, 0.f);
  for (int a = 0; a < 2; ++a)
    for (int b = 0; b < 3; ++b)
      for (int c = 0; c < 2; ++c) want[a * 2 + c] += x[(a * 3 + b) * 2 + c];
  expect_form("ReduceSum axes attribute", 11, {2, 3, 2}, {2, 2}, [](ModelBuilder& m) {
    auto* n = m.node("ReduceSum", {"x"}, {"y"}, "sum");
    attr_ints(n, "axes", {1});
    attr_int(n, "keepdims", 0);
  }, want);
  expect_form("ReduceSum axes input", 13, {2, 3, 2}, {2, 2}, [](ModelBuilder& m) {
    ints(m, "axes", {1});
    attr_int(m.node("ReduceSum", {"x", "axes"}, {"y"}, "sum"), "keepdims", 0);
  }, want);
  std::vector<float> mean = want;
  for (float& v : mean) v /= 3.f;
  expect_form("ReduceMean axes attribute", 17, {2, 3, 2}, {2, 2}, [](ModelBuilder& m) {
    auto* n = m.node("ReduceMean", {"x"}, {"y"}, "mean");
    attr_ints(n, "axes", {-2});
    attr_int(n, "keepdims", 0);
  }, mean);
  expect_form("ReduceMean axes input", 18, {2, 3, 2}, {2, 2}, [](ModelBuilder& m) {
    ints(m, "axes", {-2});
    attr_int(m.node("ReduceMean", {"x", "axes"}, {"y"}, "mean"), "keepdims", 0);
  }, mean);
}

TEST(OpsetForms, SqueezeUnsqueezeAxesAsAttributeThenAsInput) {
  const auto x = iota_floats(6);
  // [2, 1, 3] -> Squeeze(1) -> [2, 3] -> Unsqueeze(0) -> [1, 2, 3]
  expect_form("axes attributes", 11, {2, 1, 3}, {1, 2, 3}, [](ModelBuilder& m) {
    attr_ints(m.node("Squeeze", {"x"}, {"s"}, "sq"), "axes", {1});
    attr_ints(m.node("Unsqueeze", {"s"}, {"y"}, "unsq"), "axes", {0});
  }, x);
  expect_form("axes inputs", 13, {2, 1, 3}, {1, 2, 3}, [](ModelBuilder& m) {
    ints(m, "a1", {1});
    ints(m, "a0", {0});
    m.node("Squeeze", {"x", "a1"}, {"s"}, "sq");
    m.node("Unsqueeze", {"s", "a0"}, {"y"}, "unsq");
  }, x);
}

TEST(OpsetForms, SliceStartsAsAttributesThenAsInputsWithSteps) {
  const auto x = iota_floats(24);  // [4, 6]
  std::vector<float> want;  // rows 1..2, columns 2..5
  for (int r = 1; r < 3; ++r)
    for (int c = 2; c < 5; ++c) want.push_back(x[r * 6 + c]);
  expect_form("Slice attributes", 9, {4, 6}, {2, 3}, [](ModelBuilder& m) {
    auto* n = m.node("Slice", {"x"}, {"y"}, "slice");
    attr_ints(n, "starts", {1, 2});
    attr_ints(n, "ends", {3, 5});
    attr_ints(n, "axes", {0, 1});
  }, want);
  expect_form("Slice inputs", 13, {4, 6}, {2, 3}, [](ModelBuilder& m) {
    ints(m, "starts", {1, 2});
    ints(m, "ends", {3, 5});
    ints(m, "axes", {0, 1});
    ints(m, "steps", {1, 1});
    m.node("Slice", {"x", "starts", "ends", "axes", "steps"}, {"y"}, "slice");
  }, want);
}

TEST(OpsetForms, PadAsAttributeThenAsInputThenWithAxes) {
  const auto x = iota_floats(6);  // [2, 3] padded by 1 column on each side with 0.5
  std::vector<float> want;
  for (int r = 0; r < 2; ++r) {
    want.push_back(0.5f);
    for (int c = 0; c < 3; ++c) want.push_back(x[r * 3 + c]);
    want.push_back(0.5f);
  }
  expect_form("Pad attributes", 2, {2, 3}, {2, 5}, [](ModelBuilder& m) {
    auto* n = m.node("Pad", {"x"}, {"y"}, "pad");
    attr_ints(n, "pads", {0, 1, 0, 1});
    attr_float(n, "value", 0.5f);
  }, want);
  expect_form("Pad inputs", 13, {2, 3}, {2, 5}, [](ModelBuilder& m) {
    ints(m, "pads", {0, 1, 0, 1});
    m.raw_floats("v", {}, {0.5f});
    m.node("Pad", {"x", "pads", "v"}, {"y"}, "pad");
  }, want);
  expect_form("Pad inputs with axes", 18, {2, 3}, {2, 5}, [](ModelBuilder& m) {
    ints(m, "pads", {1, 1});
    m.raw_floats("v", {}, {0.5f});
    ints(m, "axes", {-1});
    m.node("Pad", {"x", "pads", "v", "axes"}, {"y"}, "pad");
  }, want);
}

TEST(OpsetForms, SplitSizesAsAttributeThenAsInputThenAsCount) {
  const auto x = iota_floats(12);  // [2, 6] split along 1 into 2 + 4; y = second part
  std::vector<float> want;
  for (int r = 0; r < 2; ++r)
    for (int c = 2; c < 6; ++c) want.push_back(x[r * 6 + c]);
  expect_form("Split attribute", 11, {2, 6}, {2, 4}, [](ModelBuilder& m) {
    auto* n = m.node("Split", {"x"}, {"a", "y"}, "split");
    attr_int(n, "axis", 1);
    attr_ints(n, "split", {2, 4});
  }, want);
  expect_form("Split input", 13, {2, 6}, {2, 4}, [](ModelBuilder& m) {
    ints(m, "sizes", {2, 4});
    attr_int(m.node("Split", {"x", "sizes"}, {"a", "y"}, "split"), "axis", 1);
  }, want);
  std::vector<float> halves;  // num_outputs 2: equal parts of 3
  for (int r = 0; r < 2; ++r)
    for (int c = 3; c < 6; ++c) halves.push_back(x[r * 6 + c]);
  expect_form("Split num_outputs", 18, {2, 6}, {2, 3}, [](ModelBuilder& m) {
    auto* n = m.node("Split", {"x"}, {"a", "y"}, "split");
    attr_int(n, "axis", 1);
    attr_int(n, "num_outputs", 2);
  }, halves);
}

TEST(OpsetForms, SoftmaxFlattensBeforeOpset13AndTakesOneAxisAfter) {
  const auto x = iota_floats(24);  // [2, 3, 4], axis 1
  auto softmax = [&](size_t groups, size_t stride, size_t len, size_t inner) {
    std::vector<float> y(x.size());
    for (size_t g = 0; g < groups; ++g)
      for (size_t i = 0; i < inner; ++i) {
        double mx = -1e30, sum = 0;
        for (size_t k = 0; k < len; ++k) mx = std::max(mx, double(x[g * stride + k * inner + i]));
        for (size_t k = 0; k < len; ++k) sum += std::exp(x[g * stride + k * inner + i] - mx);
        for (size_t k = 0; k < len; ++k)
          y[g * stride + k * inner + i] = float(std::exp(x[g * stride + k * inner + i] - mx) / sum);
      }
    return y;
  };
  // Opsets 1-12: [2, 3, 4] is coerced to [2, 12] and each row of 12 is normalized.
  expect_form("Softmax coerced to 2-D", 11, {2, 3, 4}, {2, 3, 4}, [](ModelBuilder& m) {
    attr_int(m.node("Softmax", {"x"}, {"y"}, "softmax"), "axis", 1);
  }, softmax(2, 12, 12, 1));
  // Opset 13+: only dim 1 (3 values) is normalized, for each of the other positions.
  expect_form("Softmax along one axis", 13, {2, 3, 4}, {2, 3, 4}, [](ModelBuilder& m) {
    attr_int(m.node("Softmax", {"x"}, {"y"}, "softmax"), "axis", 1);
  }, softmax(2, 12, 3, 4));
}

TEST(OpsetForms, UpsampleScalesAsAttributeThenResizeScalesAsInput) {
  const auto x = iota_floats(4);  // [1, 1, 2, 2] nearest x2
  std::vector<float> want;
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < 4; ++c) want.push_back(x[(r / 2) * 2 + c / 2]);
  expect_form("Upsample scales attribute", 7, {1, 1, 2, 2}, {1, 1, 4, 4}, [](ModelBuilder& m) {
    auto* n = m.node("Upsample", {"x"}, {"y"}, "up");
    attr_floats(n, "scales", {1.f, 1.f, 2.f, 2.f});
  }, want);
  expect_form("Upsample scales input", 9, {1, 1, 2, 2}, {1, 1, 4, 4}, [](ModelBuilder& m) {
    m.raw_floats("scales", {4}, {1.f, 1.f, 2.f, 2.f});
    m.node("Upsample", {"x", "scales"}, {"y"}, "up");
  }, want);
  expect_form("Resize scales input", 13, {1, 1, 2, 2}, {1, 1, 4, 4}, [](ModelBuilder& m) {
    m.raw_floats("scales", {4}, {1.f, 1.f, 2.f, 2.f});
    auto* n = m.node("Resize", {"x", "", "scales"}, {"y"}, "resize");
    attr_string(n, "mode", "nearest");
  }, want);
}

}  // namespace
}  // namespace vkc::test
