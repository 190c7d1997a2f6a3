// The decoders onnxruntime-genai's model builder writes, as it ships (tests/models/decoders/genai/,
// made by export_genai_builder.py on the GPU machine: builder commit in report.txt): Llama, Mistral
// (sliding window 16), Qwen2 (q/k/v biases), Qwen3 (q/k norms; in fp16 inside GroupQueryAttention),
// Phi-3, Phi-3 LongRoPE (tables chosen by an If over the total length), Gemma-2 (local window 12 on
// odd layers, soft-capped attention and logits), Gemma-3 (local window 8 on five of six layers),
// Granite (attention and residual multipliers), OLMo; each in fp32, int4 symmetric and asymmetric
// (CPU provider; tied embeddings as GatherBlockQuantized) and fp16 (CUDA provider). The cache's head
// size is the symbol kv_cache_dim in every one of them.
// - Without a hand-given --dim, each compiles into a KV-cache program (--max-seq-len 64, prefill
//   chunks of up to 4 tokens and decode steps), fully delegated, and generates onnxruntime's 16
//   tokens (its loop over the same graph, MatMulNBits at accuracy_level 0) on every backend; where
//   onnxruntime cannot run the graph (q/k norms inside fp16 GroupQueryAttention), transformers'.
//   Windowed and soft-capped layers keep their caches with update_cache.
// - The step graphs with explicit caches match onnxruntime's outputs at a past of 8 and of 20
//   (past every window) with the attention mask bound.
// - A --dim kv_cache_dim that contradicts the graph is one error naming the node.
// - The four asymmetric int4 graphs of tied-embedding models, which onnxruntime itself refuses (the
//   builder leaves GatherBlockQuantized without scales), are refused with the reason.
// - LongRoPE: the tables are chosen by the total length at each call (decode steps), and in a
//   program whose token count resizes, at N: exact within the original context (16).
#include <gtest/gtest.h>

#include <fstream>
#include <set>

#include "decoder_test_util.h"

namespace vkc::test {
namespace {

const fs::path kGenai = corpus("decoders") / "genai";

nlohmann::json greedy() {
  std::ifstream f(kGenai / "greedy.json");
  return nlohmann::json::parse(f);
}

// The architecture a folder holds (greedy.json's key): the longest key the name starts with.
std::string arch_of(const std::string& folder, const nlohmann::json& g) {
  std::string best;
  for (const auto& [arch, info] : g.items())
    if (folder.rfind(arch + "_", 0) == 0 && arch.size() > best.size()) best = arch;
  return best;
}

// The builder's asymmetric int4 graphs of tied-embedding models (onnxruntime refuses them too).
bool refused_by_onnxruntime(const std::string& folder) {
  static const std::set<std::string> kRefused = {"qwen2_int4_asym", "qwen3_int4_asym", "gemma2_int4_asym",
                                                 "gemma3_int4_asym"};
  return kRefused.count(folder) > 0;
}

// Symbolic dims of the model's inputs sized as data set `inputs` has them, and the attention mask
// bound to ones (it feeds seqlens_k through an integer sum, which folds once bound).
CompileOptions step_options(const fs::path& dir, const std::vector<Tensor>& inputs, size_t& mask) {
  const onnx::ModelProto m = read_model(dir / "model.onnx");
  CompileOptions o;
  o.dims = dims_of_set(dir / "model.onnx", inputs);
  for (int i = 0; i < m.graph().input_size() && i < static_cast<int>(inputs.size()); ++i) {
    const auto& in = m.graph().input(i);
    if (in.name() == "attention_mask") {
      mask = static_cast<size_t>(i);
      std::string ones = "1";
      for (int64_t j = 1; j < inputs[i].numel(); ++j) ones += ",1";
      o.input_values["attention_mask"] = ones;
    }
  }
  o.dims.erase("kv_cache_dim");  // the graph fixes it
  return o;
}

TEST(GenaiBuilder, KvCacheProgramsGenerateOnnxruntimesTokensWithoutAHandGivenDim) {
  const nlohmann::json g = greedy();
  size_t checked = 0;
  for (const std::string& folder : subfolders(kGenai)) {
    const std::string arch = arch_of(folder, g);
    if (arch.empty() || arch == "phi3_longrope") continue;  // below: its choice of tables
    SCOPED_TRACE(folder);
    CompileOptions o;
    o.max_seq_len = 64;
    o.dim_ranges = {{"sequence_length", {1, 4}}};
    const CompileResult r = compile(kGenai / folder / "model.onnx", o);
    if (refused_by_onnxruntime(folder)) {
      EXPECT_FALSE(r.ok);
      EXPECT_NE(diags(r.diagnostics).find("GatherBlockQuantized needs data, indices and scales"), std::string::npos)
          << diags(r.diagnostics);
      continue;
    }
    ASSERT_TRUE(r.ok) << diags(r.diagnostics);
    const auto ops = ops_of(r);
    const bool windowed = arch == "mistral" || arch == "gemma2" || arch == "gemma3";
    // The report says what became of each layer's attention: Gemma-2's soft-capped scores stay
    // unfused, over caches kept by update_cache (its local layer's window 12 too).
    ASSERT_EQ(r.partition.attention.size(), arch == "gemma3" ? 6u : 2u);
    for (const auto& a : r.partition.attention) {
      if (arch == "gemma2") {
        EXPECT_NE(a.form.find("unfused over an update_cache cache"), std::string::npos) << a.form;
        EXPECT_NE(a.why.find("soft-cap"), std::string::npos) << a.why;
      } else {
        EXPECT_TRUE(a.form == "sdpa_with_kv_cache" || a.form.find("sdpa over an update_cache cache (a window of") == 0) << a.form;
      }
    }
    EXPECT_EQ(ops.count("vk.update_cache.default") > 0, windowed);
    EXPECT_EQ(ops.count("vk.sdpa_with_kv_cache.default") > 0, arch != "mistral" && arch != "gemma2");
    const auto& info = g.at(arch);
    const auto& ort = info.at("onnxruntime");
    const std::vector<int64_t> want = ort.contains(folder) && ort.at(folder).is_array() ? ints(ort.at(folder)) : ints(info.at("hf_generate"));
    expect_generates(r.pte, ints(info.at("prompt")), want);
    ++checked;
  }
  EXPECT_EQ(checked, 32u);  // 40 built, 4 refused, 4 LongRoPE
}

TEST(GenaiBuilder, StepGraphsMatchOnnxruntimeAtPastsWithinAndBeyondTheWindows) {
  const nlohmann::json g = greedy();
  size_t checked = 0;
  for (const std::string& folder : subfolders(kGenai)) {
    if (arch_of(folder, g).empty() || refused_by_onnxruntime(folder)) continue;
    const bool fp16 = folder.find("fp16") != std::string::npos;
    for (const char* set : {"test_data_set_1", "test_data_set_2"}) {  // one token at a past of 8, of 20
      const fs::path dir = kGenai / folder / set;
      if (!fs::exists(dir)) continue;  // onnxruntime could not run the graph
      SCOPED_TRACE(dir.string());
      auto inputs = read_set(dir, "input");
      size_t mask = inputs.size();
      const CompileOptions o = step_options(kGenai / folder, inputs, mask);
      ASSERT_LT(mask, inputs.size());
      inputs.erase(inputs.begin() + static_cast<std::ptrdiff_t>(mask));
      expect_set_compiles_and_matches(kGenai / folder, set, inputs, o, fp16 ? 2e-2 : 1e-3, fp16 ? 2e-2 : 1e-4);
      ++checked;
    }
  }
  EXPECT_GE(checked, 60u);
}

// The builder's fp16 exports quantize as their fp32 twins do (the same random weights, rounded to
// fp16): every linear the recipe quantizes in the fp32 export is quantized in the fp16 one (its fp16
// weights widened exactly; scales in fp16, as the activations), and the quantized step's logits are
// as close to the unquantized export's as the fp32 twin's are to its own and much closer to the
// quantized twin's, on every backend.
TEST(GenaiBuilder, Fp16ExportsQuantizeAsTheirFp32Twins) {
  const nlohmann::json g = greedy();
  for (const std::string arch : {"llama", "qwen2"}) {
    const std::vector<int64_t> prompt = ints(g.at(arch).at("prompt"));
    // One step's logits of `folder` compiled under `recipe` ("" for none), on backend `b`.
    auto logits = [&](const std::string& folder, const std::string& recipe, const std::string& b, size_t* quantized) {
      CompileOptions o;
      o.max_seq_len = 64;
      o.dim_ranges = {{"sequence_length", {1, 4}}};
      if (!recipe.empty()) o.quantization_recipe = recipe;
      o.quantize_min_elements = 0;
      const CompileResult r = compile(kGenai / folder / "model.onnx", o);
      std::vector<double> out;
      EXPECT_TRUE(r.ok) << diags(r.diagnostics);
      if (!r.ok) return out;
      if (quantized)
        for (size_t at = 0; (at = r.quant_report.find("\"quantized\": true", at)) != std::string::npos; ++at) ++*quantized;
      RunOptions ro;
      ro.backend = b;
      Session s = Session::open(std::span<const uint8_t>(r.pte), ro);
      EXPECT_TRUE(s.ok()) << diags(s.diagnostics());
      if (!s.ok()) return out;
      const RunResult y = s.run({Tensor::of(ir::DType::Int64, {1, 1}, std::vector<int64_t>{prompt.at(0)}),
                                 Tensor::of(ir::DType::Int64, {1}, std::vector<int64_t>{0})});
      EXPECT_TRUE(y.ok) << b << ": " << diags(y.diagnostics);
      if (!y.ok) return out;
      for (int64_t i = 0; i < y.outputs.at(0).numel(); ++i) out.push_back(y.outputs.at(0).get_f(i));
      return out;
    };
    auto worst = [](const std::vector<double>& a, const std::vector<double>& b) {
      double w = 0;
      for (size_t i = 0; i < a.size() && i < b.size(); ++i) w = std::max(w, std::abs(a[i] - b[i]));
      return a.size() == b.size() && !a.empty() ? w : 1e30;
    };
    for (const std::string& b : backends()) {
      const std::vector<double> f32 = logits(arch + "_fp32", "", b, nullptr), f16 = logits(arch + "_fp16", "", b, nullptr);
      for (const std::string recipe : {"8da4w:32", "int4-weight-only:32"}) {
        SCOPED_TRACE(arch + " " + recipe + " on " + b);
        size_t n32 = 0, n16 = 0;
        const std::vector<double> q32 = logits(arch + "_fp32", recipe, b, &n32), q16 = logits(arch + "_fp16", recipe, b, &n16);
        const double e32 = worst(q32, f32), e16 = worst(q16, f16);
        EXPECT_GT(n32, 0u);
        EXPECT_EQ(n16, n32);
        EXPECT_GT(e32, 0.0);  // 4-bit weights change the logits
        EXPECT_LE(e16, 1.5 * e32) << "fp16 export's 4-bit error " << e16 << ", fp32 twin's " << e32;
        // and the two quantized programs are twins: far closer to each other than to their floats
        // (measured: 0.09-0.12 apart, 0.37-0.46 from the unquantized logits)
        EXPECT_LE(worst(q16, q32), 0.5 * e32);
      }
    }
  }
}

TEST(GenaiBuilder, AHandGivenDimThatContradictsTheGraphIsOneErrorNamingTheNode) {
  CompileOptions o;
  o.max_seq_len = 64;
  o.dims = {{"sequence_length", 1}, {"kv_cache_dim", 32}};  // the head size is 16: 64 wide queries, 4 heads
  const CompileResult r = compile(kGenai / "llama_fp32" / "model.onnx", o);
  ASSERT_FALSE(r.ok);
  const std::string d = diags(r.diagnostics);
  EXPECT_NE(d.find("node '/model/layers.0/attn/GroupQueryAttention' (GroupQueryAttention) needs dim 3 of "
                   "'past_key_values.0.key' (the head size: the query's width 128 over 8 heads) to be 16, but the size "
                   "given for 'kv_cache_dim' (32)"),
            std::string::npos)
      << d;
  EXPECT_EQ(r.diagnostics.size(), 1u) << d;
}

TEST(GenaiBuilder, LongRopeTablesAreChosenByTheTotalLengthAtEachCall) {
  // Decode steps: the If over Greater(total length, 16) follows input_pos + 1, so the short tables
  // serve the first 16 positions and the long ones the rest, as in onnxruntime's loop.
  const nlohmann::json g = greedy();
  const auto& info = g.at("phi3_longrope");
  for (const char* folder : {"phi3_longrope_fp32", "phi3_longrope_fp16", "phi3_longrope_int4", "phi3_longrope_int4_asym"}) {
    SCOPED_TRACE(folder);
    CompileOptions o;
    o.max_seq_len = 64;
    o.dims = {{"sequence_length", 1}};
    const CompileResult r = compile(kGenai / folder / "model.onnx", o);
    ASSERT_TRUE(r.ok) << diags(r.diagnostics);
    EXPECT_NE(diags(r.diagnostics).find("1 comparison(s) of the length of 'attention_mask'"), std::string::npos)
        << diags(r.diagnostics);
    expect_generates(r.pte, ints(info.at("prompt")), ints(info.at("onnxruntime").at(folder)));
  }
}

TEST(GenaiBuilder, LongRopeTablesWithinTheOriginalContextGenerateOnnxruntimesTokens) {
  // A program whose token count resizes keeps the choice made at N (a note says so): exact while N
  // is within the original context.
  const nlohmann::json g = greedy();
  const auto& info = g.at("phi3_longrope");
  for (const char* folder : {"phi3_longrope_fp32", "phi3_longrope_int4"}) {
    SCOPED_TRACE(folder);
    CompileOptions o;
    o.max_seq_len = 16;  // the original context: the If picks the short tables, as onnxruntime does up to 16
    o.dim_ranges = {{"sequence_length", {1, 4}}};
    const CompileResult r = compile(kGenai / folder / "model.onnx", o);
    ASSERT_TRUE(r.ok) << diags(r.diagnostics);
    std::vector<int64_t> want = ints(info.at("onnxruntime").at(folder));
    want.resize(8);  // 8 prompt tokens + 8 fill the 16 positions
    expect_generates(r.pte, ints(info.at("prompt")), want);
  }
}

}  // namespace
}  // namespace vkc::test
