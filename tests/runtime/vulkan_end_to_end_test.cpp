// examples/models/tiny_cnn.onnx compiled and run on the vulkan backend: against onnxruntime's
// outputs and bit-close to the cpu backend, in fp32 and fp16, planned and unplanned.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>

#include "tiny_cnn.h"
#include "vkc/compiler/driver.h"
#include "vulkan_test_util.h"

namespace vkc::test {
namespace {

namespace fs = std::filesystem;

const fs::path kData = kTinyCnnData;

class VulkanEndToEnd : public VulkanTest {};

TEST_F(VulkanEndToEnd, TinyCnnMatchesOnnxRuntimeAndCpu) {
  VKC_REQUIRE_VULKAN();
  const std::vector<uint8_t> bytes = compile_tiny({});
  const serializer::PteFile pte = serializer::read_pte_bytes(bytes);
  const HostTensor x = read_f32(kData / "input_0.bin", {1, 3, 32, 32});
  runtime::Executor e = runtime::Executor::from_pte(pte, *vulkan());
  const HostTensor got = e.run({x}).at(0);
  const runtime::Comparison c = runtime::compare(got, read_f32(kData / "output_0.bin", {1, 10}), 1e-4, 1e-6);
  EXPECT_TRUE(c.pass()) << "max abs " << c.max_abs << ", max rel " << c.max_rel;
  expect_same(pte, {x}, 1e-5, 1e-7);
  EXPECT_EQ(values(e.run({x}).at(0)), values(got));  // a second run gives the same bits
}

TEST_F(VulkanEndToEnd, TinyCnnInFp16AndWithoutMemoryPlanning) {
  VKC_REQUIRE_VULKAN();
  const HostTensor x = read_f32(kData / "input_0.bin", {1, 3, 32, 32});
  serializer::CompileOptions fp16;
  fp16.force_fp16 = true;
  const std::vector<uint8_t> half = compile_tiny(fp16);
  expect_same(serializer::read_pte_bytes(half), {x}, 2e-2, 2e-3);
  serializer::CompileOptions unplanned;
  unplanned.skip_memory_planning = true;
  const std::vector<uint8_t> plain = compile_tiny(unplanned);
  expect_same(serializer::read_pte_bytes(plain), {x}, 1e-5, 1e-7);
}

TEST_F(VulkanEndToEnd, PlannedTensorsShareMemoryAndComputeTheSame) {
  // Tensors with one mem_obj_id are bound to one allocation: less memory, the same bits as the
  // unplanned program (VKC_VULKAN_MEMORY=1 makes the delegate report what it allocated).
  VKC_REQUIRE_VULKAN();
  const HostTensor x = read_f32(kData / "input_0.bin", {1, 3, 32, 32});
  serializer::CompileOptions unplanned;
  unplanned.skip_memory_planning = true;
  ::setenv("VKC_VULKAN_MEMORY", "1", 1);
  auto load = [&](const serializer::CompileOptions& o, std::string& report) {
    ::testing::internal::CaptureStderr();
    runtime::Executor e = runtime::Executor::from_pte(serializer::read_pte_bytes(compile_tiny(o)), *vulkan());
    report = ::testing::internal::GetCapturedStderr();
    return values(e.run({x}).at(0));
  };
  std::string planned_report, plain_report;
  const auto planned = load({}, planned_report), plain = load(unplanned, plain_report);
  ::unsetenv("VKC_VULKAN_MEMORY");
  EXPECT_EQ(planned, plain);
  unsigned long long shared = 0, used = 0, alone = 0;
  ASSERT_EQ(std::sscanf(planned_report.c_str(), "vulkan delegate: %llu memory object(s) shared; tensors use %llu bytes (%llu",
                        &shared, &used, &alone), 3) << planned_report;
  EXPECT_GT(shared, 0u);
  EXPECT_LT(used, alone);
  EXPECT_NE(plain_report.find("vulkan delegate: 0 memory object(s) shared"), std::string::npos) << plain_report;
}

TEST_F(VulkanEndToEnd, OutputsStagedInDeviceMemoryReadBackTheSame) {
  // Discrete GPUs stage the outputs in device memory and copy them to the host's buffer after the
  // last dispatch; VKC_VULKAN_STAGED_READBACK=1 takes that path here (0: the shader writes the
  // host's buffer, as on lavapipe), fp32 and fp16 programs, twice each.
  VKC_REQUIRE_VULKAN();
  const HostTensor x = read_f32(kData / "input_0.bin", {1, 3, 32, 32});
  serializer::CompileOptions fp16;
  fp16.force_fp16 = true;
  for (const serializer::CompileOptions& o : {serializer::CompileOptions{}, fp16}) {
    const std::vector<uint8_t> bytes = compile_tiny(o);
    const serializer::PteFile pte = serializer::read_pte_bytes(bytes);
    auto outputs = [&](const char* staged) {
      ::setenv("VKC_VULKAN_STAGED_READBACK", staged, 1);
      runtime::Executor e = runtime::Executor::from_pte(pte, *vulkan());
      ::unsetenv("VKC_VULKAN_STAGED_READBACK");
      const auto first = values(e.run({x}).at(0));
      EXPECT_EQ(values(e.run({x}).at(0)), first);
      return first;
    };
    const auto direct = outputs("0"), staged = outputs("1");
    ASSERT_EQ(direct.size(), 10u);
    EXPECT_EQ(staged, direct);
  }
}

}  // namespace
}  // namespace vkc::test
