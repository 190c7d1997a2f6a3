// The encoder and vision half of the real-exporter corpus (tests/models/encoders/, made by
// export_encoders.py on the GPU machine): transformers BERT, DistilBERT, ViT, a Whisper encoder and
// CLIP, timm's test models and a torchvision MobileNetV3, each as PyTorch's dynamo and TorchScript
// exporters, onnxruntime's offline optimizer and transformer fusions, and onnxruntime's fp16
// converter write them. Every one compiles with every node delegated, fuses its attention where it
// has one (f32), and computes onnxruntime's outputs of that very file on cpu and (where present)
// Vulkan: rtol 1e-3 / atol 1e-4, and 1e-2 for the fp16 conversions (fp16 rounding, not a bug).
#include <gtest/gtest.h>

#include <algorithm>

#include "export_test_util.h"

namespace vkc::test {
namespace {

const fs::path kDir = fs::path(VKC_SOURCE_DIR) / "tests/models/encoders";

std::vector<std::string> folders() {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(kDir))
    if (e.is_directory()) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

bool has_attention(const std::string& name) {
  for (const char* m : {"bert", "vit", "whisper", "clip"})
    if (name.find(m) != std::string::npos) return true;
  return false;
}

class EncoderExport : public ::testing::TestWithParam<std::string> {};

TEST_P(EncoderExport, CompilesFullyDelegatedAndMatchesOnnxruntime) {
  const std::string name = GetParam();
  const fs::path dir = kDir / name;
  const auto inputs = read_set(dir / "test_data_set_0", "input");
  const auto want = read_set(dir / "test_data_set_0", "output");
  ASSERT_FALSE(inputs.empty());
  ASSERT_FALSE(want.empty());
  const CompileResult r = compile(dir / "model.onnx", CompileOptions{});
  ASSERT_TRUE(r.ok) << name << ": " << diags(r.diagnostics);
  const auto ops = ops_of(r);  // every node delegated
  const bool fp16 = name.size() > 5 && name.substr(name.size() - 5) == "_fp16";
  if (has_attention(name) && !fp16 && !name.starts_with("timm"))
    EXPECT_TRUE(ops.count("vk.et_vk.sdpa.default")) << name << ": attention was not fused";
  const double tol_r = fp16 ? 1e-2 : 1e-3, tol_a = fp16 ? 1e-2 : 1e-4;
  for (const std::string& b : backends()) {
    const auto got = run_pte(r.pte, inputs, b);
    ASSERT_EQ(got.size(), want.size()) << name << " on " << b;
    for (size_t i = 0; i < got.size(); ++i) {
      const runtime::Comparison c = runtime::compare(got[i], want[i], tol_r, tol_a);
      EXPECT_TRUE(c.pass()) << name << " on " << b << " output " << i << ": max abs " << c.max_abs << ", "
                            << c.mismatches << " mismatch(es)";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Corpus, EncoderExport, ::testing::ValuesIn(folders()),
                         [](const ::testing::TestParamInfo<std::string>& p) { return p.param; });

}  // namespace
}  // namespace vkc::test
