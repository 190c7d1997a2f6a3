// The recurrent part of the real-exporter corpus (tests/models/recurrent/, made by
// export_recurrent.py on the GPU machine): torch LSTM / GRU / RNN layers (stacked, bidirectional,
// batch_first, with and without initial states), LSTMCell / GRUCell steps, and a Silero-VAD-shaped
// conv + LSTM + linear with its state in and out, as PyTorch's TorchScript and dynamo exporters
// write them. Every one compiles with every node delegated and computes onnxruntime's outputs of
// that very file (rtol 1e-3 / atol 1e-4) on cpu and (where present) Vulkan.
#include <gtest/gtest.h>

#include <algorithm>

#include "export_test_util.h"

namespace vkc::test {
namespace {

const fs::path kDir = fs::path(VKC_SOURCE_DIR) / "tests/models/recurrent";

std::vector<std::string> folders() {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(kDir))
    if (e.is_directory()) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

class RecurrentExport : public ::testing::TestWithParam<std::string> {};

TEST_P(RecurrentExport, CompilesFullyDelegatedAndMatchesOnnxruntime) {
  const std::string name = GetParam();
  const fs::path dir = kDir / name;
  const auto inputs = read_set(dir / "test_data_set_0", "input");
  const auto want = read_set(dir / "test_data_set_0", "output");
  ASSERT_FALSE(inputs.empty());
  ASSERT_FALSE(want.empty());
  const CompileResult r = compile(dir / "model.onnx", CompileOptions{});
  ASSERT_TRUE(r.ok) << name << ": " << diags(r.diagnostics);
  ops_of(r);  // every node delegated
  for (const std::string& b : backends()) expect_close(run_pte(r.pte, inputs, b), want, name + " on " + b);
}

INSTANTIATE_TEST_SUITE_P(Corpus, RecurrentExport, ::testing::ValuesIn(folders()),
                         [](const ::testing::TestParamInfo<std::string>& p) { return p.param; });

}  // namespace
}  // namespace vkc::test
