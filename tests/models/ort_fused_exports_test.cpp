// onnxruntime's fused contrib operators as its transformer optimizer writes them (tests/models/ort_fused/,
// made by export_ort_fused.py on the GPU machine): BERT with Attention (mask index, raw 2-D mask, no
// mask) or MultiHeadAttention, ViT with either, GPT-2 with Attention over a packed past and
// unidirectional masking, a UNet block's BiasSplitGelu and BiasAdd. Each data set (padded batches,
// left padding, steps with and without past) compiles for its sizes with every node delegated and
// no contrib operator left, fuses its attention into et_vk.sdpa, and computes onnxruntime's outputs
// of that very file on cpu and (where present) Vulkan.
#include <gtest/gtest.h>

#include "decoder_test_util.h"

namespace vkc::test {
namespace {

const fs::path kDir = corpus("ort_fused");

using OrtFusedExport = ExportTest;

TEST_P(OrtFusedExport, EachSetCompilesDelegatedAndMatchesOnnxruntime) {
  const fs::path dir = kDir / GetParam();
  const onnx::ModelProto m = read_model(dir / "model.onnx");
  bool attention = false;
  for (const auto& n : m.graph().node()) attention = attention || n.op_type().find("Attention") != std::string::npos;
  for (size_t i = 0; fs::exists(dir / ("test_data_set_" + std::to_string(i))); ++i) {
    const std::string set = "test_data_set_" + std::to_string(i);
    const auto inputs = read_set(dir / set, "input");
    CompileOptions o;
    o.dims = dims_of_set(dir / "model.onnx", inputs);
    const CompileResult r = expect_set_compiles_and_matches(dir, set, inputs, o);
    if (!r.ok) continue;
    const std::set<std::string> ops = ops_of(r);  // every node delegated
    if (attention) EXPECT_TRUE(ops.count("vk.et_vk.sdpa.default")) << GetParam() << " " << set << ": attention not fused";
    for (const std::string& op : ops) EXPECT_EQ(op.find("com.microsoft"), std::string::npos) << op;
  }
}

VKC_EXPORT_CORPUS(OrtFusedExport, kDir);

}  // namespace
}  // namespace vkc::test
