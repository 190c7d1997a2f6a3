// Decoder forms real tools write beyond the symbolic-shape exports (made by
// export_static_steps.py on the GPU machine; tests/models/decoders/static_report.txt):
// - static shapes from torch.onnx (dynamo and legacy): the full sequence [1, 8] with its causal mask
//   and RoPE tables as constants, and one-token steps at a static past of 15 without an attention
//   mask (fp32, and fp16 from the model in half precision); the dynamo exporter repeats the KV heads
//   and transposes K with batch and heads merged ([B*H, L, D] -> Transpose(0,2,1) -> [B, H, D, L]);
// - onnxruntime's transformer optimizer on the symbolic Llama steps: its own graph optimizer
//   (FusedMatMul for the scaled Q K^T, QuickGelu, SimplifiedLayerNormalization) and the gpt2
//   fusions at opt_level 0 (RotaryEmbedding with cos/sin caches, SkipSimplifiedLayerNormalization;
//   its 131072-row caches cut to 256 rows by the script, so the file stays small).
// Each attention fuses into et_vk.sdpa (the report says so), the graphs match onnxruntime, and as
// KV-cache programs they generate transformers' greedy tokens on every backend; a static past
// fixes the cache's length, and another --max-seq-len is one error naming the input.
#include <gtest/gtest.h>

#include "decoder_test_util.h"

namespace vkc::test {
namespace {

const fs::path kDecoders = corpus("decoders");

struct Form {
  const char* family;
  const char* folder;
  bool fp16;
};

const std::vector<Form> kStatic = {{"llama", "llama_static_dynamo", false},
                                   {"llama", "llama_static_step_dynamo", false},
                                   {"llama", "llama_static_step_legacy", false},
                                   {"llama", "llama_static_step16_dynamo", true},
                                   {"qwen3", "qwen3_static_step_dynamo", false},
                                   {"gemma2", "gemma2_static_step_dynamo", false}};
const std::vector<Form> kOptimized = {{"llama", "llama_ortopt_ort", false}, {"llama", "llama_ortopt_mask_gpt2_o0", false}};

void expect_every_attention_fused(const CompileResult& r) {
  ASSERT_EQ(r.partition.attention.size(), 2u);  // two layers
  for (const auto& a : r.partition.attention) EXPECT_EQ(a.form, "sdpa") << a.softmax << ": " << a.why;
}

TEST(ExporterForms, StaticAndOptimizedGraphsFuseAttentionAndMatchOnnxruntime) {
  std::vector<Form> forms = kStatic;
  forms.insert(forms.end(), kOptimized.begin(), kOptimized.end());
  for (const Form& f : forms) {
    const fs::path dir = kDecoders / f.family / f.folder;
    SCOPED_TRACE(dir.string());
    const auto inputs = read_set(dir / "test_data_set_0", "input");
    CompileOptions o;
    o.dims = dims_of_set(dir / "model.onnx", inputs);
    const CompileResult r =
        expect_set_compiles_and_matches(dir, "test_data_set_0", inputs, o, f.fp16 ? 1e-2 : 1e-3, f.fp16 ? 1e-2 : 1e-4);
    expect_every_attention_fused(r);
  }
}

TEST(ExporterForms, StaticStepsKeepTheirCacheAtTheExportedLength) {
  for (const Form& f : kStatic) {
    if (std::string(f.folder).find("step") == std::string::npos) continue;
    const fs::path dir = kDecoders / f.family / f.folder;
    SCOPED_TRACE(dir.string());
    CompileOptions o;
    o.max_seq_len = 16;  // past 15 + 1 token
    const CompileResult r = compile(dir / "model.onnx", o);
    ASSERT_TRUE(r.ok) << diags(r.diagnostics);
    EXPECT_TRUE(ops_of(r).count("vk.sdpa_with_kv_cache.default"));
    if (f.fp16) continue;  // fp16 rounding may part from transformers' fp32 tokens
    Greedy g = greedy_of(kDecoders / f.family);
    g.tokens.resize(8);  // the prompt's 8 and 8 more fill the 16 positions
    expect_generates(r.pte, g.prompt, g.tokens);
    o.max_seq_len = 64;
    const CompileResult other = compile(dir / "model.onnx", o);
    EXPECT_FALSE(other.ok);
    EXPECT_NE(diags(other.diagnostics).find("has a static length of 15 (the graph was exported for 16 positions with 1 "
                                            "token(s) per call): compile with --max-seq-len 16"),
              std::string::npos)
        << diags(other.diagnostics);
  }
}

TEST(ExporterForms, OptimizedStepsGenerateTransformersTokens) {
  for (const Form& f : kOptimized) {
    const fs::path dir = kDecoders / f.family / f.folder;
    SCOPED_TRACE(dir.string());
    CompileOptions o = prefill_and_decode("sequence_length");
    if (f.folder == std::string("llama_ortopt_ort")) o.dim_ranges.clear();  // its input_ids are [1, 1]
    const CompileResult r = compile(dir / "model.onnx", o);
    ASSERT_TRUE(r.ok) << diags(r.diagnostics);
    EXPECT_TRUE(ops_of(r).count("vk.sdpa_with_kv_cache.default"));
    expect_family_tokens(r.pte, kDecoders / f.family);
  }
}

}  // namespace
}  // namespace vkc::test
