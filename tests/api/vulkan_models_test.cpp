// Small ONNX models whose operators take special paths in the vulkan backend, run on the GPU
// (lavapipe in CI) against the cpu backend.
#include <gtest/gtest.h>

#include <random>

#include "api_test_support.h"
#include "vkc/runtime/vulkan.h"

namespace vkc::test {
namespace {

std::vector<float> normal(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.f, 1.f);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

// A 1-D convolution ([N, C, L]; stride 2, padding 1, dilation 2, 2 groups) then Relu: the vulkan
// backend runs it as a 2-D convolution of height 1 between views.
TEST(VulkanModels, OneDimensionalConvolutionMatchesCpu) {
  if (runtime::vulkan_device_name().empty()) GTEST_SKIP() << "no Vulkan device";
  ModelBuilder b(8, 13);
  b.input("x", kF32, {1, 4, 19});
  b.output("y", kF32, {1, 6, 9});
  b.raw_floats("w", {6, 2, 3}, normal(36, 1));
  b.raw_floats("bias", {6}, normal(6, 2));
  auto* conv = b.node("Conv", {"x", "w", "bias"}, {"c"}, "conv1d");
  attr_ints(conv, "strides", {2});
  attr_ints(conv, "pads", {1, 1});
  attr_ints(conv, "dilations", {2});
  attr_int(conv, "group", 2);
  b.node("Relu", {"c"}, {"y"}, "relu");
  std::string bytes;
  ASSERT_TRUE(b.model.SerializeToString(&bytes));
  const CompileResult r = compile(std::span(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()), fs::path(),
                                  CompileOptions{});
  ASSERT_TRUE(r) << r.error();
  const std::vector<Tensor> in = {Tensor::of(ir::DType::Float32, {1, 4, 19}, normal(76, 3))};
  RunOptions vk;
  vk.backend = "vulkan";
  const RunResult cpu = vkc::run(r.pte, in), gpu = vkc::run(r.pte, in, vk);
  ASSERT_TRUE(cpu) << describe(cpu.diagnostics);
  ASSERT_TRUE(gpu) << describe(gpu.diagnostics);
  ASSERT_EQ(gpu.outputs.at(0).shape, (std::vector<int64_t>{1, 6, 9}));
  double diff = 0, scale = 0;
  for (int64_t i = 0; i < 54; ++i) {
    diff = std::max(diff, std::abs(cpu.outputs[0].get_f(i) - gpu.outputs[0].get_f(i)));
    scale = std::max(scale, std::abs(cpu.outputs[0].get_f(i)));
  }
  EXPECT_GT(scale, 0.5);
  EXPECT_LT(diff, 1e-5);
}

}  // namespace
}  // namespace vkc::test
