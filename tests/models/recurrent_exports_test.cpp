// The recurrent part of the real-exporter corpus (tests/models/recurrent/, made by
// export_recurrent.py on the GPU machine): torch LSTM / GRU / RNN layers (stacked, bidirectional,
// batch_first, with and without initial states), LSTMCell / GRUCell steps, and a Silero-VAD-shaped
// conv + LSTM + linear with its state in and out, as PyTorch's TorchScript and dynamo exporters
// write them. Every one compiles with every node delegated and computes onnxruntime's outputs of
// that very file (rtol 1e-3 / atol 1e-4) on cpu and (where present) Vulkan.
#include <gtest/gtest.h>

#include "export_test_util.h"

namespace vkc::test {
namespace {

const fs::path kDir = corpus("recurrent");

using RecurrentExport = ExportTest;

TEST_P(RecurrentExport, CompilesFullyDelegatedAndMatchesOnnxruntime) {
  CompiledExport c;
  compile_export(kDir / GetParam(), c);  // every node delegated
  if (HasFatalFailure()) return;
  EXPECT_FALSE(expect_every_set_matches(kDir / GetParam(), c.result.pte).empty());
}

VKC_EXPORT_CORPUS(RecurrentExport, kDir);

}  // namespace
}  // namespace vkc::test
