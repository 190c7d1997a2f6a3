// The encoder and vision half of the real-exporter corpus (tests/models/encoders/, made by
// export_encoders.py on the GPU machine): transformers BERT, DistilBERT, ViT, a Whisper encoder and
// CLIP, timm's test models and a torchvision MobileNetV3, each as PyTorch's dynamo and TorchScript
// exporters, onnxruntime's offline optimizer and transformer fusions, and onnxruntime's fp16
// converter write them. Every one compiles with every node delegated, fuses its attention where it
// has one (f32), and computes onnxruntime's outputs of that very file on cpu and (where present)
// Vulkan: rtol 1e-3 / atol 1e-4, and 1e-2 for the fp16 conversions (fp16 rounding, not a bug).
#include <gtest/gtest.h>

#include "export_test_util.h"

namespace vkc::test {
namespace {

const fs::path kDir = corpus("encoders");

bool has_attention(const std::string& name) {
  for (const char* m : {"bert", "vit", "whisper", "clip"})
    if (name.find(m) != std::string::npos) return true;
  return false;
}

using EncoderExport = ExportTest;

TEST_P(EncoderExport, CompilesFullyDelegatedAndMatchesOnnxruntime) {
  const std::string name = GetParam();
  CompiledExport c;
  compile_export(kDir / name, c);  // every node delegated
  if (HasFatalFailure()) return;
  const bool fp16 = name.size() > 5 && name.substr(name.size() - 5) == "_fp16";
  if (has_attention(name) && !name.starts_with("timm")) {
    EXPECT_TRUE(c.ops.count("vk.et_vk.sdpa.default")) << name << ": attention was not fused";
  }
  EXPECT_FALSE(expect_every_set_matches(kDir / name, c.result.pte, fp16 ? 1e-2 : 1e-3, fp16 ? 1e-2 : 1e-4).empty());
}

VKC_EXPORT_CORPUS(EncoderExport, kDir);

}  // namespace
}  // namespace vkc::test
