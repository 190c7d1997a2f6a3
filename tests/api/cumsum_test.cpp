// CumSum of floats as a MatMul by a constant triangle (decompose-ops): every exclusive/reverse
// combination along an inner and the last axis equals a running sum, on cpu and Vulkan.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "api_test_support.h"
#include "vkc/runtime/vulkan.h"

namespace vkc::test {
namespace {

std::vector<uint8_t> cumsum_model(int64_t axis, bool exclusive, bool reverse) {
  ModelBuilder b(8, 14);
  b.input("x", kF32, {2, 5, 3});
  b.output("y", kF32, {2, 5, 3});
  auto* a = b.initializer("axis", onnx::TensorProto_DataType_INT64, {});
  a->add_int64_data(axis);
  auto* n = b.node("CumSum", {"x", "axis"}, {"y"}, "cumsum");
  attr_int(n, "exclusive", exclusive ? 1 : 0);
  attr_int(n, "reverse", reverse ? 1 : 0);
  return b.bytes();
}

// The running sum of x [2, 5, 3] along `axis` (1 or 2), written out directly.
std::vector<float> running_sum(const std::vector<float>& x, int64_t axis, bool exclusive, bool reverse) {
  const int64_t dims[3] = {2, 5, 3};
  std::vector<float> y(x.size());
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 5; ++j)
      for (int64_t k = 0; k < 3; ++k) {
        const int64_t at = axis == 1 ? j : k, len = dims[axis];
        float sum = 0;
        for (int64_t t = 0; t < len; ++t) {
          const bool in = reverse ? (exclusive ? t > at : t >= at) : (exclusive ? t < at : t <= at);
          if (in) sum += x[static_cast<size_t>(axis == 1 ? (i * 5 + t) * 3 + k : (i * 5 + j) * 3 + t)];
        }
        y[static_cast<size_t>((i * 5 + j) * 3 + k)] = sum;
      }
  return y;
}

TEST(CumSum, EveryModeAlongEitherAxisIsARunningSum) {
  const std::vector<float> x = normal_floats(30, 21);
  std::vector<std::string> backends = {"cpu"};
  if (!runtime::vulkan_device_name().empty()) backends.push_back("vulkan");
  for (int64_t axis : {1, -1})
    for (bool exclusive : {false, true})
      for (bool reverse : {false, true}) {
        SCOPED_TRACE(fmt::format("axis {} exclusive {} reverse {}", axis, exclusive, reverse));
        const CompileResult r = compile(cumsum_model(axis, exclusive, reverse), fs::path(), CompileOptions{});
        ASSERT_TRUE(r) << r.error();
        EXPECT_EQ(r.partition.rejected, 0u);
        const std::vector<float> want = running_sum(x, axis < 0 ? 2 : axis, exclusive, reverse);
        for (const std::string& backend : backends) {
          RunOptions o;
          o.backend = backend;
          const RunResult out = vkc::run(r.pte, {Tensor::of(ir::DType::Float32, {2, 5, 3}, x)}, o);
          ASSERT_TRUE(out) << backend << ": " << describe(out.diagnostics);
          for (size_t i = 0; i < want.size(); ++i)
            EXPECT_NEAR(out.outputs.at(0).get_f(static_cast<int64_t>(i)), want[i], 1e-5) << backend << " " << i;
        }
      }
}

}  // namespace
}  // namespace vkc::test
