// Integer Add/Sub/Mul (the exporters' index arithmetic: position ids, offsets) run as the
// runtime's integer kernels on cpu and Vulkan; integer Div is refused with its reason.
#include <gtest/gtest.h>

#include "api_test_support.h"
#include "vkc/runtime/vulkan.h"

namespace vkc::test {
namespace {

// y = (a + b) * a - b, with b [1, 3] broadcast over a [2, 3].
std::vector<uint8_t> int_model(int32_t dtype, const char* last = "Sub") {
  ModelBuilder b(8, 13);
  b.input("a", dtype, {2, 3});
  b.input("b", dtype, {1, 3});
  b.output("y", dtype, {2, 3});
  b.node("Add", {"a", "b"}, {"s"}, "add");
  b.node("Mul", {"s", "a"}, {"p"}, "mul");
  b.node(last, {"p", "b"}, {"y"}, "last");
  return b.bytes();
}

TEST(IntegerArithmetic, AddSubMulRunOnCpuAndVulkan) {
  const std::vector<int64_t> a = {1, -2, 3, 40, 5, -600}, b = {7, 0, -9};
  for (int32_t dtype : {onnx::TensorProto_DataType_INT32, onnx::TensorProto_DataType_INT64}) {
    const ir::DType t = dtype == onnx::TensorProto_DataType_INT32 ? ir::DType::Int32 : ir::DType::Int64;
    const CompileResult r = compile(int_model(dtype), fs::path(), CompileOptions{});
    ASSERT_TRUE(r) << r.error();
    EXPECT_EQ(r.partition.rejected, 0u);
    auto tensor = [&](const std::vector<int64_t>& v, std::vector<int64_t> shape) {
      if (t == ir::DType::Int64) return Tensor::of(t, shape, v);
      return Tensor::of(t, shape, std::vector<int32_t>(v.begin(), v.end()));
    };
    const std::vector<Tensor> ins = {tensor(a, {2, 3}), tensor(b, {1, 3})};
    std::vector<std::string> backends = {"cpu"};
    if (!runtime::vulkan_device_name().empty()) backends.push_back("vulkan");
    for (const std::string& backend : backends) {
      RunOptions o;
      o.backend = backend;
      const RunResult out = vkc::run(r.pte, ins, o);
      ASSERT_TRUE(out) << backend << ": " << describe(out.diagnostics);
      EXPECT_EQ(out.outputs.at(0).dtype, t);
      for (int64_t i = 0; i < 6; ++i) {
        const int64_t bi = b[static_cast<size_t>(i % 3)], ai = a[static_cast<size_t>(i)];
        EXPECT_EQ(out.outputs.at(0).get_i(i), (ai + bi) * ai - bi) << backend << " " << i;
      }
    }
  }
}

TEST(IntegerArithmetic, IntegerDivIsRefusedWithItsReason) {
  const CompileResult r = compile(int_model(onnx::TensorProto_DataType_INT32, "Div"), fs::path(), CompileOptions{});
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().find("integer Div is not supported"), std::string::npos) << r.error();
}

}  // namespace
}  // namespace vkc::test
