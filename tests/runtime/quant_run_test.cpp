// Quantized programs executed on the cpu backend against the same model compiled in fp32:
// each recipe's output must stay within an SQNR floor, which checks packing, scale layout and
// the activation quantization end to end (not just the constants the compiler wrote).
#include <gtest/gtest.h>

#include <cmath>

#include "../compiler/llama_test_model.h"
#include "vkc/compiler/driver.h"
#include "vkc/runtime/backend.h"
#include "vkc/runtime/executor.h"
#include "vkc/runtime/vulkan.h"

namespace vkc::test {
namespace {

std::vector<kernels::HostTensor> run_on(const fs::path& pte, const kernels::HostTensor& ids, const char* name) {
  auto backend = runtime::make_backend(name);
  auto exec = runtime::Executor::load(pte, *backend);
  return exec.run({ids});
}

std::vector<kernels::HostTensor> run_on_cpu(const fs::path& pte, const kernels::HostTensor& ids) {
  auto backend = runtime::make_backend("cpu");
  auto exec = runtime::Executor::load(pte, *backend);
  return exec.run({ids});
}

double sqnr_db(const kernels::HostTensor& ref, const kernels::HostTensor& got) {
  double signal = 0, noise = 0;
  for (int64_t i = 0; i < ref.numel(); ++i) {
    signal += ref.get_f(i) * ref.get_f(i);
    noise += (ref.get_f(i) - got.get_f(i)) * (ref.get_f(i) - got.get_f(i));
  }
  return noise == 0 ? 200 : 10 * std::log10(signal / noise);
}

TEST(QuantizedPrograms, StayCloseToTheFp32ProgramOnTheCpuBackend) {
  TempDir dir;
  const LlamaTestModel model = LlamaTestModel::write(dir.path());
  std::vector<int64_t> token_ids = {1, 7, 42, 99, 128, 200, 255, 3};
  const auto ids = kernels::HostTensor::of(ir::DType::Int64, {LlamaTestModel::kSeq}, token_ids);
  compiler::compile_file(model.path, dir / "fp32.pte", {});
  const auto ref = run_on_cpu(dir / "fp32.pte", ids);

  // Floors: int4 grouped weights cost ~19 dB per weight; dynamic int8 activations a little more;
  // int8 per-channel weights ~40 dB.
  const std::vector<std::pair<std::string, double>> recipes = {
      {"int8-weight-only", 35.0}, {"int4-weight-only:32", 16.0}, {"8da4w:32", 16.0}, {"8da4w:32-embedding", 14.0}};
  for (const auto& [recipe, floor] : recipes) {
    compiler::CompileConfig c;
    c.quantize = recipe;
    const fs::path pte = dir / (recipe + ".pte");
    compiler::compile_file(model.path, pte, c);
    const auto got = run_on_cpu(pte, ids);
    ASSERT_EQ(got.size(), ref.size());
    const double db = sqnr_db(ref[0], got[0]);
    EXPECT_GT(db, floor) << recipe;
    EXPECT_LT(db, 100.0) << recipe << ": the output did not change, was anything quantized?";
    std::printf("%-22s logits SQNR %.1f dB\n", recipe.c_str(), db);
  }
}

TEST(QuantizedPrograms, RecipesOnVulkanMatchCpu) {
  // The embeddings (fp and int4), the int8 / int4 linears (linear_quantized.glsl) and the 8da4w pair
  // (choose_qparams.glsl, linear_dq8ca.glsl) on the GPU. Weight-only programs give the cpu backend's
  // numbers to rounding; 8da4w's per-row activation scales are computed in f32 on the GPU (double on
  // the cpu), so an activation may land one int8 step away: compared by SQNR.
  if (runtime::vulkan_device_name().empty()) GTEST_SKIP() << "no Vulkan device";
  TempDir dir;
  const LlamaTestModel model = LlamaTestModel::write(dir.path());
  const auto ids = kernels::HostTensor::of(ir::DType::Int64, {LlamaTestModel::kSeq},
                                           std::vector<int64_t>{5, 0, 255, 17, 64, 128, 9, 31});
  for (const char* recipe : {"int8-weight-only", "int4-weight-only:32", "8da4w:32", "8da4w:32-embedding"}) {
    compiler::CompileConfig c;
    c.quantize = recipe;
    const fs::path pte = dir / (std::string(recipe) + ".pte");
    compiler::compile_file(model.path, pte, c);
    const auto cpu = run_on(pte, ids, "cpu"), gpu = run_on(pte, ids, "vulkan");
    ASSERT_EQ(cpu.size(), gpu.size());
    for (size_t o = 0; o < cpu.size(); ++o) {
      double diff = 0;
      for (int64_t i = 0; i < cpu[o].numel(); ++i) diff = std::max(diff, std::abs(cpu[o].get_f(i) - gpu[o].get_f(i)));
      if (std::string(recipe).rfind("8da4w", 0) == 0)
        EXPECT_GT(sqnr_db(cpu[o], gpu[o]), 50.0) << recipe << " output " << o;
      else
        EXPECT_LT(diff, 1e-5) << recipe << " output " << o;
    }
  }
}

}  // namespace
}  // namespace vkc::test
