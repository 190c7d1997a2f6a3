// The int4 matrix-vector linears (linear_quantized.yaml's _gemv variants) over a K long enough that
// the workgroup stages its inputs in several spans (the _ep variants load the first 3 spans' weights
// at once, GEMV_EARLY_SPANS) and loads each later span's weights a span ahead
// (vkc_linear_gemv.glslh's GEMV_PREFETCH): the vulkan backend against the cpu backend, with and
// without the residual add in the epilogue, buffers and textures, f32 and f16, with subgroup sums
// (the _sg variants, where the device has them) and without (VKC_VULKAN_SUBGROUP=0).
#include <algorithm>
#include <random>

#include "common/gemv_dispatches.h"
#include "vkc/runtime/vulkan.h"
#include "vulkan_test_util.h"

namespace vkc::test {
namespace {

using serializer::VkDataType;
using V = VkDataType;

class VulkanGemvQ4 : public VulkanTest {};

// et_vk.linear_q4gsw's weights: rows of K / 2 bytes, element 2i in the low nibble of byte i and
// 2i + 1 in the high one, each stored as q + 8 (q random in [-8, 7]).
std::vector<uint8_t> random_q4_rows(uint32_t n, uint32_t k, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int> nib(0, 15);
  std::vector<uint8_t> bytes(static_cast<size_t>(n) * k / 2);
  for (uint8_t& b : bytes) b = static_cast<uint8_t>(nib(gen) | nib(gen) << 4);
  return bytes;
}

// The program's inputs after x (and x itself): with `residual`, linear output y is added to an
// input r of its shape (the add the matrix-vector kernel runs in its epilogue, an _ep variant),
// the sum the output; otherwise y is. Returns the inputs' values (seeded from `seed`).
std::vector<HostTensor> gemv_inputs_and_output(VkProgramBuilder& b, int x, int y, bool residual, StorageType st,
                                               VkDataType dt, uint32_t k, uint32_t n, uint32_t seed) {
  std::vector<HostTensor> inputs{random_f32({1, 1, k}, seed)};
  b.input(x);
  int out = y;
  if (residual) {
    const int r = tensor(b, {1, 1, n}, st, kW, dt), z = tensor(b, {1, 1, n}, st, kW, dt);
    b.call("aten.add.Tensor", {r, y, b.value(1.0), z});
    b.input(r);
    inputs.push_back(random_f32({1, 1, n}, seed + 1));
    out = z;
  }
  b.output(out);
  return inputs;
}

// A row of k inputs in chunks of 32 whose magnitudes differ (uniform in [-1, 1] times 100, 0.01,
// 0 or 1 by chunk), as a model's activations around an outlier channel do.
HostTensor spread_chunks(uint32_t k, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<float> v(k);
  for (uint32_t i = 0; i < k; ++i) {
    const uint32_t c = i / 32;
    v[i] = dist(gen) * (c % 11 == 6 ? 0.0f : c % 7 == 3 ? 100.0f : c % 5 == 1 ? 0.01f : 1.0f);
  }
  return HostTensor::of(ir::DType::Float32, {1, 1, k}, v);
}

// The kernel families a matrix-vector variant runs as: its _sg twin (subgroup sums, where the
// device has them), itself (VKC_VULKAN_SUBGROUP=0), its _dot twin (VKC_VULKAN_INT_DOT=1).
enum class Family { Subgroups, Plain, Dot };

// Variant `stem` (+ _ep with the residual add) for the dtype and storage.
std::string gemv_variant(const std::string& stem, bool residual, VkDataType dt, StorageType st) {
  return stem + (residual ? "_ep" : "") + (dt == V::Float16 ? "_f16" : "_f32") + (st == kBuf ? "_buffer" : "_texture3d");
}

// Runs the program on the cpu and vulkan backends (f16 within 1e-2 relative or 0.5, f32 within
// f32_rtol or f32_atol) and checks that variant `name` of `family` recorded a dispatch doing so,
// or its copy `copy` ("_w256": 256 invocations over K past 2048; "_t4": 4 teams; the specs'
// local_size_variants) where not empty.
void expect_same_on(const serializer::PteFile& pte, const std::vector<HostTensor>& inputs, const std::string& name,
                    Family family, VkDataType dt, double f32_rtol, double f32_atol, const std::string& copy) {
  const auto count = [&] {
    const std::string n = copy.empty() ? name : wide_variant(name, copy);
    if (family == Family::Dot) return runtime::vulkan_variant_dispatches(dot_variant(n));
    return family == Family::Subgroups ? gemv_dispatches(n) : runtime::vulkan_variant_dispatches(n);
  };
  const uint64_t before = count();
  if (dt == V::Float16) expect_same(pte, inputs, 1e-2, 0.5);
  else expect_same(pte, inputs, f32_rtol, f32_atol);
  EXPECT_GT(count(), before) << "the backend chose another kernel";
}

// K = 6304: 197 chunks of 32, so 4 spans of the 64 a workgroup stages at once (the last of 5
// chunks); N = 10 leaves a partial block of 4 outputs. A weight swapped between spans, or a span
// computed with the previous span's weights, changes the outputs far beyond the tolerance. Every
// kernel family: the float products with subgroup sums and without, and the integer dot products
// (the _dot variants, VKC_VULKAN_INT_DOT=1, where the device has the instruction: each chunk of 32
// inputs staged as 16-bit integers under its own scale; f16 activations only, f32 ones keep the
// float products), over inputs whose chunks' magnitudes differ by 10^4 and some of them zero
// (spread_chunks).
TEST_F(VulkanGemvQ4, LongKInSpansWithTheNextWeightsLoadedAhead) {
  VKC_REQUIRE_VULKAN();
  ::setenv("VKC_VULKAN_GPU_KERNELS", "1", 1);
  constexpr uint32_t kK = 6304, kN = 10, kGroup = 32;
  for (const std::string mode : {"subgroups", "VKC_VULKAN_SUBGROUP=0", "VKC_VULKAN_INT_DOT=1"})
  for (const bool wide : {true, false}) {
    const bool subgroups = mode != "VKC_VULKAN_SUBGROUP=0", dot = mode == "VKC_VULKAN_INT_DOT=1";
    if (dot && !runtime::vulkan_integer_dot_product()) continue;
    if (!wide && !subgroups) continue;  // (the plain families have one width)
    for (V dt : {V::Float32, V::Float16})
      for (StorageType st : {kBuf, kTex})
        for (bool residual : {false, true}) {
          if (!subgroups) ::setenv("VKC_VULKAN_SUBGROUP", "0", 1);
          if (dot) ::setenv("VKC_VULKAN_INT_DOT", "1", 1);
          if (wide) ::setenv("VKC_VULKAN_GEMV_WIDE", "1", 1);
          ::setenv("VKC_VULKAN_GEMV_TEAMS", "1", 1);  // (the _dot family's teams: below)
          VkProgramBuilder b;
          const int x = tensor(b, {1, 1, kK}, st, kW, dt), y = tensor(b, {1, 1, kN}, st, kW, dt);
          const int w = b.constant_bytes({kN, kK / 2}, V::UInt8, random_q4_rows(kN, kK, 3));
          const int scales = b.constant({kK / kGroup, kN}, random_values(static_cast<size_t>(kK / kGroup * kN), 4));
          const int bias = residual ? b.value(VkNull{}) : b.constant({kN}, random_values(kN, 5));
          b.call("et_vk.linear_q4gsw.default", {x, w, scales, b.value(int64_t{kGroup}), bias, y});
          std::vector<HostTensor> inputs = gemv_inputs_and_output(b, x, y, residual, st, dt, kK, kN, 13);
          inputs[0] = spread_chunks(kK, 13);
          const std::string name = gemv_variant("linear_q4_gemv", residual, dt, st);
          SCOPED_TRACE(name + " " + mode + (wide ? " VKC_VULKAN_GEMV_WIDE=1" : ""));
          const Family family = dot && dt == V::Float16 ? Family::Dot : subgroups ? Family::Subgroups : Family::Plain;
          // (no int4 family has a wide copy: the float products stage a span of f32 inputs, 37 KB of
          // shared memory at 256 invocations, and the _dot family's 256 are teams, tested below)
          expect_same_on(b.build(), inputs, name, family, dt, 1e-4, 1e-3, "");
          ::unsetenv("VKC_VULKAN_GEMV_TEAMS");
          ::unsetenv("VKC_VULKAN_SUBGROUP");
          ::unsetenv("VKC_VULKAN_INT_DOT");
          ::unsetenv("VKC_VULKAN_GEMV_WIDE");
        }
  }
  ::unsetenv("VKC_VULKAN_GPU_KERNELS");
}

// The int4 _dot kernels' copies of 4 teams (the default: 16 outputs a workgroup of 256, the row's
// inputs staged once for the 4 teams) over the same long K, with N = 10 (the
// workgroup's third and fourth teams past N: they store nothing) and N = 40 (3 workgroups),
// with and without the residual add, in buffers and textures: the 64-invocation kernels' math.
TEST_F(VulkanGemvQ4, TeamsOfFourShareOneStagingOfTheRow) {
  VKC_REQUIRE_VULKAN();
  if (!runtime::vulkan_integer_dot_product() || !runtime::vulkan_subgroup_arithmetic()) GTEST_SKIP() << "no _dot kernels";
  ::setenv("VKC_VULKAN_GPU_KERNELS", "1", 1);
  ::setenv("VKC_VULKAN_INT_DOT", "1", 1);
  constexpr uint32_t kK = 6304, kGroup = 32;
  for (const uint32_t kN : {10u, 40u})
  for (StorageType st : {kBuf, kTex})
    for (bool residual : {false, true}) {
      VkProgramBuilder b;
      const int x = tensor(b, {1, 1, kK}, st, kW, V::Float16), y = tensor(b, {1, 1, kN}, st, kW, V::Float16);
      const int w = b.constant_bytes({kN, kK / 2}, V::UInt8, random_q4_rows(kN, kK, 3));
      const int scales = b.constant({kK / kGroup, kN}, random_values(static_cast<size_t>(kK / kGroup * kN), 4));
      const int bias = residual ? b.value(VkNull{}) : b.constant({kN}, random_values(kN, 5));
      b.call("et_vk.linear_q4gsw.default", {x, w, scales, b.value(int64_t{kGroup}), bias, y});
      std::vector<HostTensor> inputs = gemv_inputs_and_output(b, x, y, residual, st, V::Float16, kK, kN, 13);
      inputs[0] = spread_chunks(kK, 13);
      const std::string name = wide_variant(gemv_variant("linear_q4_gemv", residual, V::Float16, st), "_t4");
      SCOPED_TRACE(name);
      expect_same_on(b.build(), inputs, name, Family::Dot, V::Float16, 0, 0, "");
    }
  ::unsetenv("VKC_VULKAN_INT_DOT");
  ::unsetenv("VKC_VULKAN_GPU_KERNELS");
}

// The int4 _dot kernels take their copies of 4 teams by default; a device with less workgroup
// memory than those need gets the 64-invocation kernel: the int4 _dot variants' _t4 copies declare ~9 KB (the staged span and a
// partial sum per invocation), the 64-invocation ones 1 KB, so under a 2 KB limit
// (VKC_VULKAN_SHARED_LIMIT, below what Vulkan allows a device but between the two) the same long-K
// linear runs the 64-wide kernel, with the same outputs.
TEST_F(VulkanGemvQ4, TeamCopiesNeedTheirWorkgroupMemory) {
  VKC_REQUIRE_VULKAN();
  if (!runtime::vulkan_integer_dot_product() || !runtime::vulkan_subgroup_arithmetic()) GTEST_SKIP() << "no _dot kernels";
  ::setenv("VKC_VULKAN_GPU_KERNELS", "1", 1);
  ::setenv("VKC_VULKAN_INT_DOT", "1", 1);
  constexpr uint32_t kK = 6304, kN = 10, kGroup = 32;
  for (const bool small : {false, true}) {
    if (small) ::setenv("VKC_VULKAN_SHARED_LIMIT", "2048", 1);
    VkProgramBuilder b;
    const int x = tensor(b, {1, 1, kK}, kBuf, kW, V::Float16), y = tensor(b, {1, 1, kN}, kBuf, kW, V::Float16);
    const int w = b.constant_bytes({kN, kK / 2}, V::UInt8, random_q4_rows(kN, kK, 3));
    const int scales = b.constant({kK / kGroup, kN}, random_values(static_cast<size_t>(kK / kGroup * kN), 4));
    b.call("et_vk.linear_q4gsw.default", {x, w, scales, b.value(int64_t{kGroup}), b.constant({kN}, random_values(kN, 5)), y});
    std::vector<HostTensor> inputs = gemv_inputs_and_output(b, x, y, false, kBuf, V::Float16, kK, kN, 13);
    inputs[0] = spread_chunks(kK, 13);
    SCOPED_TRACE(small ? "2 KB of workgroup memory" : "the device's");
    const std::string name = small ? "linear_q4_gemv_f16_buffer" : "linear_q4_gemv_t4_f16_buffer";
    expect_same_on(b.build(), inputs, name, Family::Dot, V::Float16, 0, 0, "");
    ::unsetenv("VKC_VULKAN_SHARED_LIMIT");
  }
  ::unsetenv("VKC_VULKAN_INT_DOT");
  ::unsetenv("VKC_VULKAN_GPU_KERNELS");
}

// The 8da4w pair (choose_qparams_affine, then linear_dq8ca_q4gsw over the same row) on the
// matrix-vector kernels that compute the row's int8 parameters themselves, over the same long K:
// the float products (with subgroups and without) and the integer dot products (the _dot variants,
// VKC_VULKAN_INT_DOT=1, where the device has the instruction: the row's int8 values staged a span
// at a time, nibble sums and the zero point's terms taken out exactly). An activation may land one
// int8 step away from the cpu's (its scale in f32 here, in double there): a few 1e-4 of the output.
// The _dot family also over K = 5632 (a 1.1B decoder's down projection: 2 spans of 2048 and a
// partial third, the _ep variants' 3 spans of weights loaded at once, GEMV_EARLY_SPANS).
TEST_F(VulkanGemvQ4, EightDa4wLongKOnEveryKernelFamily) {
  VKC_REQUIRE_VULKAN();
  ::setenv("VKC_VULKAN_GPU_KERNELS", "1", 1);
  constexpr uint32_t kN = 10, kGroup = 32;
  for (const uint32_t kK : {6304u, 5632u})
  for (const std::string mode : {"subgroups", "VKC_VULKAN_SUBGROUP=0", "VKC_VULKAN_INT_DOT=1", "twins"})
  for (const bool wide : {true, false}) {
    // (twins: the _dot family's 4-team copies' _chain twins, run unchained under
    // VKC_VULKAN_CHAIN_TWINS=1)
    const bool twins = mode == "twins";
    const bool subgroups = mode != "VKC_VULKAN_SUBGROUP=0", dot = mode == "VKC_VULKAN_INT_DOT=1" || twins;
    if (dot && !runtime::vulkan_integer_dot_product()) continue;
    if (kK == 5632 && !dot) continue;
    if (!wide && !subgroups) continue;  // (the plain families have one width)
    if (twins && !wide) continue;
    for (V dt : {V::Float32, V::Float16})
      for (StorageType st : {kBuf, kTex})
        for (bool residual : {false, true}) {
          if (!subgroups) ::setenv("VKC_VULKAN_SUBGROUP", "0", 1);
          if (dot) ::setenv("VKC_VULKAN_INT_DOT", "1", 1);
          if (twins) {
            ::setenv("VKC_VULKAN_CHAIN", "1", 1);
            ::setenv("VKC_VULKAN_CHAIN_TWINS", "1", 1);
          }
          // (the _dot family's widths: its copies of 4 teams, the default, and its 64-wide kernels)
          if (wide && !dot) ::setenv("VKC_VULKAN_GEMV_WIDE", "1", 1);
          if (!wide && dot) ::setenv("VKC_VULKAN_GEMV_TEAMS", "1", 1);
          VkProgramBuilder b;
          const int x = tensor(b, {1, 1, kK}, st, kW, dt), y = tensor(b, {1, 1, kN}, st, kW, dt);
          const int scale = tensor(b, {1, 1}, st, kW, dt), zero = tensor(b, {1, 1}, st, kW, V::Int32);
          b.call("torchao.choose_qparams_affine.default",
                 {x, b.value(std::string("ASYMMETRIC")), b.value(serializer::VkIntList{{1, 1, kK}}), b.value(int64_t{1}),
                  b.value(int64_t{-128}), b.value(int64_t{127}), b.value(1.1920929e-07), b.value(VkNull{}),
                  b.value(VkNull{}), b.value(serializer::VkValueList{{scale, zero}})});
          const int w = b.constant_bytes({kN, kK / 2}, V::UInt8, random_q4_rows(kN, kK, 7));
          const int sums = b.constant_bytes({kK / kGroup, kN}, V::Int32, std::vector<uint8_t>(kK / kGroup * kN * 4));
          const int scales = b.constant({kK / kGroup, kN}, random_values(static_cast<size_t>(kK / kGroup * kN), 8));
          const int bias = residual ? b.value(VkNull{}) : b.constant({kN}, random_values(kN, 9));
          b.call("et_vk.linear_dq8ca_q4gsw.default", {x, scale, zero, w, sums, scales, b.value(int64_t{kGroup}), bias, y});
          const std::vector<HostTensor> inputs = gemv_inputs_and_output(b, x, y, residual, st, dt, kK, kN, 15);
          const std::string name = gemv_variant("linear_dq8ca_q4_gemv_rowq", residual, dt, st);
          SCOPED_TRACE(name + " " + mode + (wide ? " wide" : "") + " K " + std::to_string(kK));
          const Family family = dot ? Family::Dot : subgroups ? Family::Subgroups : Family::Plain;
          const uint64_t twins_before = runtime::vulkan_recorded_twins();
          expect_same_on(b.build(), inputs, name, family, dt, 1e-3, 1e-2,
                         !wide || family == Family::Plain ? "" : dot ? "_t4" : "_w256");
          if (twins) EXPECT_GT(runtime::vulkan_recorded_twins(), twins_before) << "no twin ran";
          ::unsetenv("VKC_VULKAN_SUBGROUP");
          ::unsetenv("VKC_VULKAN_INT_DOT");
          ::unsetenv("VKC_VULKAN_GEMV_WIDE");
          ::unsetenv("VKC_VULKAN_GEMV_TEAMS");
          ::unsetenv("VKC_VULKAN_CHAIN");
          ::unsetenv("VKC_VULKAN_CHAIN_TWINS");
        }
  }
  ::unsetenv("VKC_VULKAN_GPU_KERNELS");
}

}  // namespace
}  // namespace vkc::test
