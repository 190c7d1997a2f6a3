// examples/models/tiny_cnn.onnx compiled by the compiler library, run on the cpu backend and
// compared with onnxruntime's outputs on the same input (tests/runtime/data/tiny_cnn).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <sstream>

#include "../compiler/cli_runner.h"
#include "../compiler/onnx_test_models.h"
#include "test_util.h"
#include "tiny_cnn.h"
#include "vkc/compiler/driver.h"
#include "vkc/runtime/compare.h"
#include "vkc/runtime/executor.h"
#include "vkc/runtime/vulkan.h"

namespace vkc::test {
namespace {

namespace fs = std::filesystem;
using kernels::HostTensor;

const fs::path kData = kTinyCnnData;

HostTensor run_cpu(const std::vector<uint8_t>& pte) {
  auto backend = runtime::make_backend("cpu");
  runtime::Executor e = runtime::Executor::from_pte(serializer::read_pte_bytes(pte), *backend);
  EXPECT_EQ(e.inputs().size(), 1u);
  EXPECT_EQ(e.inputs()[0].shape, (Shape{1, 3, 32, 32}));
  return e.run({read_f32(kData / "input_0.bin", {1, 3, 32, 32})}).at(0);
}

TEST(EndToEnd, TinyCnnMatchesOnnxRuntime) {
  const HostTensor got = run_cpu(compile_tiny({}));
  const runtime::Comparison c = runtime::compare(got, read_f32(kData / "output_0.bin", {1, 10}), 1e-4, 1e-6);
  EXPECT_TRUE(c.pass()) << "max abs " << c.max_abs << ", max rel " << c.max_rel;
}

TEST(EndToEnd, TinyCnnWithoutMemoryPlanningGivesTheSameBits) {
  serializer::CompileOptions o;
  o.skip_memory_planning = true;
  const HostTensor planned = run_cpu(compile_tiny({})), unplanned = run_cpu(compile_tiny(o));
  EXPECT_EQ(values(planned), values(unplanned));
}

TEST(EndToEnd, TinyCnnInFp16StaysClose) {
  serializer::CompileOptions o;
  o.force_fp16 = true;
  const HostTensor got = run_cpu(compile_tiny(o));
  EXPECT_EQ(got.dtype, ir::DType::Float32);
  const runtime::Comparison c = runtime::compare(got, read_f32(kData / "output_0.bin", {1, 10}), 2e-2, 2e-3);
  EXPECT_TRUE(c.pass()) << "max abs " << c.max_abs << ", max rel " << c.max_rel;
  EXPECT_GT(c.max_abs, 0);  // fp16 storage does round
}

// --small-texture-limits leaves the 4096-wide MaxPool (texture only) outside the delegates (the
// Relu falls back to a buffer); with --fallback cpu it becomes a KernelCall to
// aten::max_pool2d_with_indices.out with its two outputs, run with the cpu kernels between the
// two delegate calls.
TEST(EndToEnd, CpuFallbackKernelCallsRunBetweenDelegates) {
  TempDir dir;
  ModelBuilder m;
  m.input("x", kF32, {1, 2, 2, 4096});
  m.output("y", kF32, {1, 2, 2, 2048});
  m.node("Relu", {"x"}, {"r"}, "wide_relu");
  auto* pool = m.node("MaxPool", {"r"}, {"p"}, "wide_pool");
  attr_ints(pool, "kernel_shape", {1, 2});
  attr_ints(pool, "strides", {1, 2});
  m.node("Sigmoid", {"p"}, {"y"}, "narrow_sigmoid");
  compiler::CompileConfig config;
  config.options.small_texture_limits = true;
  config.cpu_fallback = true;
  const std::vector<uint8_t> pte = compile_model(m.save(dir / "wide.onnx"), config);

  const serializer::PteFile f = serializer::read_pte_bytes(pte);
  const auto& plan = f.program.plans.at(0);
  const auto kernel_calls = std::count_if(plan.instructions.begin(), plan.instructions.end(),
                                          [](const auto& i) { return std::holds_alternative<serializer::KernelCall>(i); });
  EXPECT_EQ(kernel_calls, 1);
  EXPECT_EQ(plan.delegates.size(), 2u);

  std::vector<float> x(2 * 2 * 4096);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(static_cast<int>(i * 7919 % 201) - 100) / 25.0f;
  auto backend = runtime::make_backend("cpu");
  runtime::Executor e = runtime::Executor::from_pte(serializer::read_pte_bytes(pte), *backend);
  const HostTensor y = e.run({HostTensor::of(ir::DType::Float32, {1, 2, 2, 4096}, x)}).at(0);
  ASSERT_EQ(y.shape, (Shape{1, 2, 2, 2048}));
  for (int64_t i = 0; i < y.numel(); ++i) {
    const float m2 = std::max({0.0f, x[2 * i], x[2 * i + 1]});
    ASSERT_NEAR(y.get_f(i), 1.0 / (1.0 + std::exp(-static_cast<double>(m2))), 1e-6) << i;
  }
}

class RunCommand : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("vkc-run-test-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    const auto pte = compile_tiny({});
    std::ofstream(dir_ / "tiny.pte", std::ios::binary).write(reinterpret_cast<const char*>(pte.data()), pte.size());
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(RunCommand, ChecksExpectedOutputs) {
  const std::string pte = (dir_ / "tiny.pte").string();
  CliResult r = run_vkc("run " + pte + " --input " + (kData / "input_0.bin").string() + " --expect " + kData.string());
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("output 0 (probs): f32 [1,10]"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("result: pass"), std::string::npos) << r.out;
  // --random 12345 is ort-reference.js's input; --json; --repeat
  r = run_vkc("run " + pte + " --random 12345 --expect " + kData.string() + " --json --repeat 2");
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("\"pass\": true"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"runs\": 2"), std::string::npos) << r.out;
  // another input: a mismatch exits 1
  r = run_vkc("run " + pte + " --random 1 --expect " + kData.string());
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("FAIL"), std::string::npos) << r.out;
}

// --profile kernels: each dispatch's GPU time, then the same time summed per shader; the sums add
// up to the total and their counts to the dispatches. --profile step: the whole run's time.
TEST_F(RunCommand, ProfilePrintsGpuTimePerShader) {
  if (runtime::vulkan_device_name().empty()) GTEST_SKIP() << "no Vulkan device";
  const std::string pte = (dir_ / "tiny.pte").string();
  CliResult r = run_vkc("run " + pte + " --backend vulkan --random 1 --repeat 2 --profile kernels");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  int dispatches = 0;
  double total_ms = 0;
  ASSERT_EQ(std::sscanf(r.err.substr(r.err.find("vulkan profile: ")).c_str(),
                        "vulkan profile: %d dispatch(es), %lf ms GPU time", &dispatches, &total_ms), 2) << r.err;
  ASSERT_GT(dispatches, 0);
  std::istringstream lines(r.err.substr(r.err.find("vulkan profile by shader")));
  double sum_us = 0;
  int counted = 0, shaders = 0;
  for (std::string line; std::getline(lines, line);) {
    double us = 0, share = 0;
    int count = 0;
    char name[256] = {};
    if (std::sscanf(line.c_str(), " by shader %lf us %lf%% %dx %255s", &us, &share, &count, name) != 4) continue;
    sum_us += us;
    counted += count;
    ++shaders;
  }
  EXPECT_GT(shaders, 0) << r.err;
  EXPECT_EQ(counted, dispatches) << r.err;
  EXPECT_NEAR(sum_us, total_ms * 1e3, 0.1 * shaders + 1e-3 * total_ms * 1e3) << r.err;
  r = run_vkc("run " + pte + " --backend vulkan --random 1 --profile step");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("vulkan run profile: "), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("by shader"), std::string::npos) << r.err;
}

TEST_F(RunCommand, ProfileNeedsTheVulkanBackend) {
  const CliResult r = run_vkc("run " + (dir_ / "tiny.pte").string() + " --random 1 --profile kernels");
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("--profile needs --backend vulkan"), std::string::npos) << r.err;
}

TEST_F(RunCommand, SavesOutputsAsTensorProtos) {
  const std::string pte = (dir_ / "tiny.pte").string();
  CliResult r = run_vkc("run " + pte + " --random 12345 --save " + (dir_ / "out").string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = run_vkc("run " + pte + " --input 0=" + (kData / "input_0.bin").string() + " --expect " + (dir_ / "out").string() +
              " --rtol 0 --atol 0");
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  // The folder is a test-data folder: its input_0.pb holds the inputs used, so it replays alone,
  // and other inputs do not match its outputs.
  r = run_vkc("run " + pte + " --random 7 --save " + (dir_ / "random").string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_TRUE(fs::exists(dir_ / "random" / "input_0.pb"));
  r = run_vkc("run " + pte + " --expect " + (dir_ / "random").string() + " --rtol 0 --atol 0");
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  r = run_vkc("run " + pte + " --random 8 --expect " + (dir_ / "random").string() + " --rtol 0 --atol 0");
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
}

TEST_F(RunCommand, ErrorsAreOneLine) {
  const std::string pte = (dir_ / "tiny.pte").string();
  CliResult r = run_vkc("run " + pte);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "vkc: error: input 0 is not given (use --input FILE, --random SEED, or --expect DIR holding input_<i>.pb)\n");
  // Inputs by ONNX name (the program keeps them); an unknown name lists the real ones.
  r = run_vkc("run " + pte + " --input image=" + (kData / "input_0.bin").string() + " --expect " + kData.string());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("result: pass"), std::string::npos) << r.out;
  r = run_vkc("run " + pte + " --input img=" + (kData / "input_0.bin").string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err_lines(), 1u) << r.err;
  EXPECT_NE(r.err.find("no input 'img' (inputs: image)"), std::string::npos) << r.err;
  r = run_vkc("run " + pte + " --backend tpu --random 1");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err_lines(), 1u) << r.err;
  r = run_vkc("run " + (dir_ / "missing.pte").string() + " --random 1");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err_lines(), 1u) << r.err;
}

}  // namespace
}  // namespace vkc::test
