// A decode step's attention over the KV cache (sdpa_with_kv_cache with one query row a call) on the
// GPU kernels, against the cpu backend, call after call as the cache fills: the one-row kernels
// (the _dec variants, where the device has subgroup arithmetic) at head dims 64 and 128 (one and
// two batches of a key's texels), with grouped query heads, past 256 keys (a second part, whose
// results the last part to finish adds up), in f32 textures and f16 buffers.
#include "common/gemv_dispatches.h"
#include "vkc/runtime/compare.h"
#include "vkc/runtime/executor.h"
#include "vkc/runtime/vulkan.h"
#include "vulkan_test_util.h"

namespace vkc::test {
namespace {

using serializer::VkDataType;
using serializer::VkNull;
using V = VkDataType;

class VulkanDecodeAttention : public VulkanTest {};

TEST_F(VulkanDecodeAttention, OneRowKernelsFollowTheCacheAsItFills) {
  VKC_REQUIRE_VULKAN();
  if (!runtime::vulkan_subgroup_arithmetic()) GTEST_SKIP() << "no subgroup arithmetic: no _dec kernels";
  struct Case {
    uint32_t d, hq, hkv, cache, steps;
    V dt;
    StorageType st;
  };
  for (const Case& c : {Case{64, 8, 2, 300, 280, V::Float32, kTex}, Case{128, 4, 1, 272, 264, V::Float16, kBuf}}) {
    const std::string variant = std::string("sdpa_kv_cache_fused_sg_dec") + (c.dt == V::Float16 ? "_f16" : "_f32") +
                                (c.st == kBuf ? "_buffer" : "_texture3d");
    SCOPED_TRACE(variant + " D " + std::to_string(c.d));
    VkProgramBuilder b;
    const int q = tensor(b, {1, 1, c.hq, c.d}, c.st, kW, c.dt), k = tensor(b, {1, 1, c.hkv, c.d}, c.st, kW, c.dt),
              v = tensor(b, {1, 1, c.hkv, c.d}, c.st, kW, c.dt), out = tensor(b, {1, 1, c.hq, c.d}, c.st, kW, c.dt);
    const int pos = tensor(b, {1}, kBuf, kW, V::Int32);
    const size_t cache_elems = size_t{c.cache} * c.hkv * c.d;
    const int kc = b.constant({1, c.cache, c.hkv, c.d}, std::vector<float>(cache_elems, 0.0f));
    const int vc = b.constant({1, c.cache, c.hkv, c.d}, std::vector<float>(cache_elems, 0.0f));
    const int start = b.value(serializer::VkSymInt{0});
    b.call("et_vk.select_as_symint.default", {pos, b.value(int64_t{0}), b.value(int64_t{0}), start});
    b.call("sdpa_with_kv_cache.default", {q, k, v, kc, vc, start, b.value(int64_t{1}), b.value(VkNull{}), b.value(0.0),
                                          b.value(true), b.value(VkNull{}), out});
    for (int in : {q, k, v}) b.input(in);
    b.input(pos, serializer::ScalarType::Long);  // (int64 positions, as the programs take them)
    b.output(out);
    const serializer::PteFile pte = b.build();
    ::setenv("VKC_VULKAN_GPU_KERNELS", "1", 1);
    ::setenv("VKC_VULKAN_ATTN_DECODE", "1", 1);  // (off by default)
    const uint64_t before = runtime::vulkan_variant_dispatches(variant);
    auto cpu_backend = runtime::make_backend("cpu");
    runtime::Executor cpu = runtime::Executor::from_pte(pte, *cpu_backend);
    runtime::Executor gpu = runtime::Executor::from_pte(pte, *vulkan());
    ::unsetenv("VKC_VULKAN_GPU_KERNELS");
    for (uint32_t s = 0; s < c.steps; ++s) {
      const std::vector<HostTensor> inputs{
          random_f32({1, 1, c.hq, c.d}, 3 * s + 1, -2, 2), random_f32({1, 1, c.hkv, c.d}, 3 * s + 2, -2, 2),
          random_f32({1, 1, c.hkv, c.d}, 3 * s + 3), HostTensor::of(ir::DType::Int64, {1}, std::vector<int64_t>{s})};
      const auto want = cpu.run(inputs);
      const auto got = gpu.run(inputs);
      const runtime::Comparison cmp = runtime::compare(got.at(0), want.at(0), c.dt == V::Float16 ? 1e-2 : 1e-4,
                                                       c.dt == V::Float16 ? 5e-3 : 1e-5);
      if (!cmp.pass()) ::unsetenv("VKC_VULKAN_ATTN_DECODE");
      ASSERT_TRUE(cmp.pass()) << "step " << s << ": " << cmp.mismatches << " mismatches, max abs " << cmp.max_abs;
    }
    ::unsetenv("VKC_VULKAN_ATTN_DECODE");
    EXPECT_GT(runtime::vulkan_variant_dispatches(variant), before) << "the backend chose another kernel";
  }
}

}  // namespace
}  // namespace vkc::test
