// Shared by the vulkan backend tests: one backend (validation layer on when installed) for the
// whole test binary, hand-built graphs with explicit storage/layout tags, and cpu-vs-vulkan runs.
#pragma once

#include <gtest/gtest.h>

#include <random>

#include "graph_builder.h"
#include "test_util.h"
#include "vkc/runtime/compare.h"
#include "vkc/runtime/executor.h"
#include "vkc/runtime/vulkan.h"

namespace vkc::test {

using kernels::HostTensor;
using serializer::MemoryLayout;
using serializer::StorageType;

constexpr StorageType kTex = StorageType::Texture3D;
constexpr StorageType kBuf = StorageType::Buffer;
constexpr MemoryLayout kW = MemoryLayout::WidthPacked;
constexpr MemoryLayout kH = MemoryLayout::HeightPacked;
constexpr MemoryLayout kC = MemoryLayout::ChannelsPacked;

/// The vulkan backend shared by every test (nullptr: no Vulkan device at all).
inline runtime::Backend* vulkan() {
  static std::unique_ptr<runtime::Backend> backend = [] {
    std::unique_ptr<runtime::Backend> b;
    if (runtime::vulkan_device_name().empty()) return b;
    runtime::VulkanOptions o;
    o.validation = true;
    b = runtime::make_vulkan_backend(o);
    return b;
  }();
  return backend.get();
}

#define VKC_REQUIRE_VULKAN() \
  if (!::vkc::test::vulkan()) GTEST_SKIP() << "no Vulkan device (install mesa-vulkan-drivers for lavapipe)"

/// Checks after each test that the validation layer stayed silent.
class VulkanTest : public ::testing::Test {
 protected:
  void SetUp() override { messages_ = runtime::vulkan_validation_messages(); }
  void TearDown() override {
    EXPECT_EQ(runtime::vulkan_validation_messages(), messages_) << "validation layer messages (see stderr)";
  }
  uint64_t messages_ = 0;
};

inline int tensor(VkProgramBuilder& b, std::vector<uint32_t> dims, StorageType st, MemoryLayout ml,
                  serializer::VkDataType dt = serializer::VkDataType::Float32) {
  serializer::VkTensor t;
  t.dtype = dt;
  t.dims = std::move(dims);
  t.storage = st;
  t.layout = ml;
  return b.value(t);
}

inline HostTensor random_f32(std::vector<int64_t> shape, uint32_t seed, float lo = -1, float hi = 1) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = dist(gen);
  return HostTensor::of(ir::DType::Float32, std::move(shape), v);
}

inline std::vector<float> random_values(size_t n, uint32_t seed) {
  std::vector<float> v(n);
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1, 1);
  for (float& x : v) x = dist(gen);
  return v;
}

/// Runs the program on cpu and vulkan and expects every output to agree.
inline void expect_same(const serializer::PteFile& pte, const std::vector<HostTensor>& inputs, double rtol = 1e-4,
                        double atol = 1e-5) {
  auto cpu = runtime::make_backend("cpu");
  const auto want = runtime::Executor::from_pte(pte, *cpu).run(inputs);
  const auto got = runtime::Executor::from_pte(pte, *vulkan()).run(inputs);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    const runtime::Comparison c = runtime::compare(got[i], want[i], rtol, atol);
    EXPECT_TRUE(c.pass()) << "output " << i << ": " << c.mismatches << " mismatches, max abs " << c.max_abs
                          << ", max rel " << c.max_rel;
  }
}

}  // namespace vkc::test
