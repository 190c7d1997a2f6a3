// A decode step's attention over the KV cache (sdpa_with_kv_cache with one query row a call) on the
// GPU kernels, against the cpu backend, call after call as the cache fills: the one-row kernels
// (the _dec variants, where the device has subgroup arithmetic) at head dims 64 and 128 (one and
// two batches of a key's texels), with grouped query heads, past 256 keys (a second part, whose
// results the last part to finish adds up), in f32 textures and f16 buffers; and the kernels by kv
// head (the _gqa variants, the default).
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

struct Case {
  uint32_t d, hq, hkv, cache, steps;
  V dt;
  StorageType st;
};

// One sdpa_with_kv_cache call a step (no rotary), `c.steps` steps from position 0, on the cpu and
// vulkan backends under the settings `env` (name, value): every step's output the cpu's, and
// variant `variant` recorded a dispatch.
void follow_the_cache(const Case& c, const std::string& variant, const std::vector<std::pair<const char*, const char*>>& env) {
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
  for (const auto& [name, value] : env) ::setenv(name, value, 1);
  const uint64_t before = runtime::vulkan_variant_dispatches(variant);
  auto cpu_backend = runtime::make_backend("cpu");
  runtime::Executor cpu = runtime::Executor::from_pte(pte, *cpu_backend);
  runtime::Executor gpu = runtime::Executor::from_pte(pte, *vulkan());
  ::unsetenv("VKC_VULKAN_GPU_KERNELS");
  const auto unset = [&] {
    for (const auto& [name, value] : env) ::unsetenv(name);
  };
  for (uint32_t s = 0; s < c.steps; ++s) {
    const std::vector<HostTensor> inputs{
        random_f32({1, 1, c.hq, c.d}, 3 * s + 1, -2, 2), random_f32({1, 1, c.hkv, c.d}, 3 * s + 2, -2, 2),
        random_f32({1, 1, c.hkv, c.d}, 3 * s + 3), HostTensor::of(ir::DType::Int64, {1}, std::vector<int64_t>{s})};
    const auto want = cpu.run(inputs);
    const auto got = gpu.run(inputs);
    const runtime::Comparison cmp = runtime::compare(got.at(0), want.at(0), c.dt == V::Float16 ? 1e-2 : 1e-4,
                                                     c.dt == V::Float16 ? 5e-3 : 1e-5);
    if (!cmp.pass()) unset();
    ASSERT_TRUE(cmp.pass()) << "step " << s << ": " << cmp.mismatches << " mismatches, max abs " << cmp.max_abs;
  }
  unset();
  EXPECT_GT(runtime::vulkan_variant_dispatches(variant), before) << "the backend chose another kernel";
}

std::string with_dtype(const std::string& stem, const Case& c) {
  return stem + (c.dt == V::Float16 ? "_f16" : "_f32") + (c.st == kBuf ? "_buffer" : "_texture3d");
}

TEST_F(VulkanDecodeAttention, OneRowKernelsFollowTheCacheAsItFills) {
  VKC_REQUIRE_VULKAN();
  if (!runtime::vulkan_subgroup_arithmetic()) GTEST_SKIP() << "no subgroup arithmetic: no _dec kernels";
  for (const Case& c : {Case{64, 8, 2, 300, 280, V::Float32, kTex}, Case{128, 4, 1, 272, 264, V::Float16, kBuf}}) {
    const std::string variant = with_dtype("sdpa_kv_cache_fused_sg_dec", c);
    SCOPED_TRACE(variant + " D " + std::to_string(c.d));
    follow_the_cache(c, variant, {{"VKC_VULKAN_ATTN_DECODE", "1"}});  // (off by default)
  }
}

// The kernels by kv head (the _gqa variants, the default for one query row): a workgroup per (kv
// head, part of its keys) for its G query heads, as the cache fills: G 4 at D 64 (f32 textures),
// G 8 at D 128 (f16 buffers: 256 output texels, the most a workgroup takes), G 3 at D 96 (24
// texels a row: tiles of 21 keys), with the default parts (at least 16 keys; up to 19 a kv head
// here, added up by the last to finish, 8 at a time) and with one part (VKC_VULKAN_ATTN_SPLIT_KEYS=0:
// its keys in tiles, the output written at once). G 16 at D 128 (512 texels) takes the per-head
// kernels.
TEST_F(VulkanDecodeAttention, ByKvHeadKernelsFollowTheCacheAsItFills) {
  VKC_REQUIRE_VULKAN();
  if (!runtime::vulkan_subgroup_arithmetic()) GTEST_SKIP() << "no subgroup arithmetic: no _gqa kernels";
  for (const Case& c : {Case{64, 8, 2, 300, 280, V::Float32, kTex}, Case{128, 8, 1, 200, 190, V::Float16, kBuf},
                        Case{96, 6, 2, 120, 110, V::Float32, kBuf}})
    for (const bool one_part : {false, true}) {
      const std::string variant = with_dtype("sdpa_kv_cache_fused_sg_gqa", c);
      SCOPED_TRACE(variant + " D " + std::to_string(c.d) + (one_part ? ", one part" : ""));
      follow_the_cache(c, variant, one_part ? std::vector<std::pair<const char*, const char*>>{{"VKC_VULKAN_ATTN_SPLIT_KEYS", "0"}}
                                            : std::vector<std::pair<const char*, const char*>>{});
    }
  const Case wide{128, 16, 1, 40, 36, V::Float16, kBuf};
  SCOPED_TRACE("G 16, D 128");
  follow_the_cache(wide, with_dtype("sdpa_kv_cache_fused_sg_split", wide), {});
}

}  // namespace
}  // namespace vkc::test
