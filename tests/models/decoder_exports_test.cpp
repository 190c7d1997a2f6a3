// Real exporter output: the tiny decoders tests/models/export_decoders.py exported with torch.onnx
// (dynamo and legacy) from transformers' Llama, Qwen3, Phi-3 and Gemma, with onnxruntime's outputs
// and transformers' greedy tokens saved beside them (tests/models/decoders/).
// - Full-sequence graphs: fully delegated, attention/RoPE/RMSNorm fused, logits equal onnxruntime's,
//   the fused program equals the unfused one (fusions skipped, run with --fallback cpu), and so does
//   one compiled for a range of lengths (--dim sequence=1..16).
// - Decode-step graphs with a concat-style cache (past length fixed with --dim): every output equals
//   onnxruntime's at two past lengths.
// - The same step graphs compiled with --max-seq-len (the cache inside the program): greedy tokens
//   equal transformers' generate(), through vkc::Session::generate.
// Each on the cpu backend and, where a Vulkan device exists (lavapipe in CI), on the vulkan backend.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <onnx/onnx_pb.h>
#include <set>
#include <unistd.h>

#include "common/gemv_dispatches.h"
#include "decoder_test_util.h"
#include "vkc/runtime/vulkan.h"

namespace vkc::test {
namespace {

namespace fs = std::filesystem;
const fs::path kDir = corpus("decoders");
const std::vector<std::string> kFamilies = {"llama", "qwen3", "phi3", "gemma"};

TEST(DecoderExports, SequenceGraphsFuseAndMatchOnnxruntime) {
  const std::vector<std::string> fusions = {"fuse-rms-norm", "fuse-rotary-embedding", "fuse-attention"};
  for (const std::string& fam : kFamilies) {
    const fs::path dir = kDir / fam / (fam + "_seq_dynamo");
    SCOPED_TRACE(dir.string());
    const auto inputs = read_set(dir / "test_data_set_0", "input");
    CompileOptions o;
    o.dims["sequence"] = inputs.at(0).shape.at(1);
    const CompileResult fused = expect_set_compiles_and_matches(dir, "test_data_set_0", inputs, o);
    ASSERT_TRUE(fused.ok);
    const auto ops = ops_of(fused);
    for (const char* op : {"vk.et_vk.sdpa.default", "vk.et_vk.apply_rotary_emb_hf.default", "vk.et_vk.rms_norm.default"})
      EXPECT_TRUE(ops.count(op)) << op << " missing";
    EXPECT_FALSE(ops.count("vk.aten.softmax.default")) << "an attention was left unfused";
    // The same graph without the fusions computes the same logits.
    CompileOptions plain = o;
    plain.skip_passes = fusions;
    plain.cpu_fallback = true;
    const CompileResult unfused = compile(dir / "model.onnx", plain);
    ASSERT_TRUE(unfused.ok) << diags(unfused.diagnostics);
    const auto a = run_pte(fused.pte, inputs, "cpu"), b = run_pte(unfused.pte, inputs, "cpu");
    expect_close(a, b, fam + ": fused vs unfused");
    // Over a range of lengths: one resizing program (the folded [0, S) positions and the causal
    // mask are prefixes of their largest forms) computes the same logits at the set's length.
    // (Gemma's single key head at one token pairs with its queries' rotary as at other lengths.)
    CompileOptions ranged;
    ranged.dim_ranges["sequence"] = {1, 16};
    EXPECT_TRUE(ops_of(expect_set_compiles_and_matches(dir, "test_data_set_0", inputs, ranged)).count("vk.et_vk.sdpa.default"));
  }
}

TEST(DecoderExports, StepGraphsMatchOnnxruntimeAtTwoPastLengths) {
  for (const std::string& fam : kFamilies)
    for (const char* exporter : {"dynamo", "legacy"}) {
      const fs::path dir = kDir / fam / (fam + "_step_" + exporter);
      SCOPED_TRACE(dir.string());
      for (const char* set : {"test_data_set_0", "test_data_set_1"}) {
        const auto inputs = read_set(dir / set, "input");
        CompileOptions o;
        o.dims["past"] = inputs.at(2).shape.at(2);
        EXPECT_TRUE(ops_of(expect_set_compiles_and_matches(dir, set, inputs, o)).count("vk.et_vk.sdpa.default"));
      }
    }
}

TEST(DecoderExports, KvCacheProgramsGenerateTransformersGreedyTokens) {
  for (const std::string& fam : kFamilies) {
    for (const char* exporter : {"dynamo", "legacy"}) {
      const fs::path model = kDir / fam / (fam + "_step_" + std::string(exporter)) / "model.onnx";
      SCOPED_TRACE(model.string());
      CompileOptions o;
      o.max_seq_len = 32;
      const CompileResult r = compile(model, o);
      ASSERT_TRUE(r.ok) << diags(r.diagnostics);
      const auto ops = ops_of(r);
      // Every fusion fires: attention on the cache, RoPE, RMSNorm; the rotary tables are read at
      // input_pos from tables of every position (tabulate-positions), not computed each step.
      for (const char* op : {"vk.sdpa_with_kv_cache.default", "vk.et_vk.apply_rotary_emb_hf.default",
                             "vk.et_vk.rms_norm.default"})
        EXPECT_TRUE(ops.count(op)) << op << " missing";
      for (const char* op : {"vk.et_vk.sdpa.default", "vk.aten.softmax.default", "vk.aten.pow.Tensor_Scalar",
                             "vk.aten.cos.default", "vk.aten.sin.default", "vk.aten.bmm.default"})
        EXPECT_FALSE(ops.count(op)) << op << " left: a pattern did not fuse";
      expect_family_tokens(r.pte, kDir / fam, /*gpu_kernels_too=*/true);
    }
  }
}

// Chunked prefill: a 4-token step export (export_prefill_chunks.py, the same tiny Llama) under
// --max-seq-len takes the prompt 4 tokens a call: 8 tokens are two whole chunks, 6 leave a padded
// last chunk; the generated tokens equal transformers' generate() for both prompts.
TEST(DecoderExports, ChunkedPrefillGeneratesTransformersGreedyTokens) {
  std::ifstream f(kDir / "llama/prefill_greedy.json");
  const nlohmann::json greedy = nlohmann::json::parse(f);
  CompileOptions o;
  o.max_seq_len = 32;
  const CompileResult r = compile(kDir / "llama/llama_step4_dynamo/model.onnx", o);
  ASSERT_TRUE(r.ok) << diags(r.diagnostics);
  EXPECT_TRUE(ops_of(r).count("vk.sdpa_with_kv_cache.default"));
  for (const std::string& b : backends()) {
    for (const char* n : {"8", "6"}) {
      RunOptions ro;
      ro.backend = b;
      Session s = Session::open(std::span<const uint8_t>(r.pte), ro);
      ASSERT_TRUE(s.ok()) << diags(s.diagnostics());
      const auto prompt = ints(greedy.at(std::string("prompt_") + n)), want = ints(greedy.at(std::string("hf_generate_") + n));
      const GenerateResult g = s.generate(prompt, want.size());
      ASSERT_TRUE(g.ok) << diags(g.diagnostics);
      EXPECT_EQ(g.tokens, want) << "prompt of " << n << " on " << b;
    }
  }
}

// A bounded dynamic sequence (export_dynamic_steps.py: step graphs whose token count is symbolic
// too) under --max-seq-len and --dim sequence=1..S: one program and one cache take a prefill of
// any length up to S and one-token decode steps. One session runs the data sets in order (5 tokens
// at an empty cache, 3 more, then 1: each extends the cache the previous left) and every call's
// logits equal onnxruntime's with the concat-style cache; then greedy generation in chunks of up
// to 3 equals transformers' generate().
TEST(DecoderExports, ADynamicSequenceProgramPrefillsAndDecodesInOneCache) {
  for (const char* fam : {"llama", "qwen3"}) {
    const Greedy greedy = greedy_of(kDir / fam);
    for (const char* exporter : {"dynamo", "legacy"}) {
      const fs::path dir = kDir / fam / (std::string(fam) + "_dyn_" + exporter);
      SCOPED_TRACE(dir.string());
      for (const int64_t max : {int64_t{5}, int64_t{3}}) {
        CompileOptions o;
        o.max_seq_len = 32;
        o.dim_ranges = {{"sequence", {1, max}}};
        const CompileResult r = compile(dir / "model.onnx", o);
        ASSERT_TRUE(r.ok) << diags(r.diagnostics);
        EXPECT_TRUE(ops_of(r).count("vk.sdpa_with_kv_cache.default"));
        for (const std::string& b : backends()) {
          RunOptions ro;
          ro.backend = b;
          Session s = Session::open(std::span<const uint8_t>(r.pte), ro);
          ASSERT_TRUE(s.ok()) << diags(s.diagnostics());
          ASSERT_TRUE(s.inputs().at(0).dynamic);
          if (max == 5)
            for (const char* set : {"test_data_set_0", "test_data_set_1", "test_data_set_2"}) {
              const auto in = read_set(dir / set, "input");
              const auto expected = read_set(dir / set, "output");
              const Tensor pos = Tensor::of(ir::DType::Int64, {1}, std::vector<int64_t>{in.at(1).get_i(0)});
              const RunResult out = s.run({in.at(0), pos});
              ASSERT_TRUE(out.ok) << diags(out.diagnostics);
              expect_close({out.outputs.at(0)}, {expected.at(0)}, std::string(set) + " on " + b);
            }
          else {
            const GenerateResult g = s.generate(greedy.prompt, greedy.tokens.size());
            ASSERT_TRUE(g.ok) << diags(g.diagnostics);
            EXPECT_EQ(g.tokens, greedy.tokens) << "on " << b;
          }
        }
        // Chunks of several query rows through the GPU kernels (the matrix-vector linears, the
        // workgroup-per-row attention over the cache).
        // sdpa_with_kv_cache as one dispatch that writes the new rows and attends (here with the
        // rotary embedding before it: the kernel rotates q and the new k as it reads them), over
        // chunks of up to 3 query rows and one-token steps.
        const std::vector<std::string> all = backends();
        if (max == 3 && std::find(all.begin(), all.end(), "vulkan") != all.end()) {
          // (One workgroup per query row here, VKC_VULKAN_ATTN_SPLIT_KEYS=0; split below.)
          ::setenv("VKC_VULKAN_GPU_KERNELS", "1", 1);
          ::setenv("VKC_VULKAN_ATTN_SPLIT_KEYS", "0", 1);
          const std::string fused = "sdpa_kv_cache_fused_rope_f32_texture3d";
          const uint64_t before = gemv_dispatches(fused);
          // The RMSNorms before the projections run inside them (the _norm variants: alone, with an
          // epilogue, or Q, K and V as one dispatch where they follow each other).
          const auto normed = [] {
            uint64_t n = 0;
            for (const char* v : {"linear_gemv_norm_f32_texture3d", "linear_gemv_ep_norm_f32_texture3d",
                                  "linear_gemv_multi_norm_f32_texture3d", "linear_gemv_dual_norm_f32_texture3d"})
              n += gemv_dispatches(v);
            return n;
          };
          const uint64_t normed_before = normed();
          RunOptions ro;
          ro.backend = "vulkan";
          Session s = Session::open(std::span<const uint8_t>(r.pte), ro);
          const GenerateResult g = s.generate(greedy.prompt, greedy.tokens.size());
          ::unsetenv("VKC_VULKAN_GPU_KERNELS");
          ::unsetenv("VKC_VULKAN_ATTN_SPLIT_KEYS");
          ASSERT_TRUE(g.ok) << diags(g.diagnostics);
          EXPECT_EQ(g.tokens, greedy.tokens) << "on vulkan with GPU kernels";
          EXPECT_GT(gemv_dispatches(fused), before);
          EXPECT_GT(normed(), normed_before);
          // Flash-decoding: the 32 cache rows split among workgroups of 8 keys each (parts past a
          // row's keys leave at once, the last part of a row to finish adds them up).
          ::setenv("VKC_VULKAN_GPU_KERNELS", "1", 1);
          ::setenv("VKC_VULKAN_ATTN_SPLIT_KEYS", "8", 1);
          const std::string split = "sdpa_kv_cache_fused_rope_split_f32_texture3d";
          const uint64_t split_before = gemv_dispatches(split);
          Session ss = Session::open(std::span<const uint8_t>(r.pte), ro);
          const GenerateResult gs = ss.generate(greedy.prompt, greedy.tokens.size());
          ::unsetenv("VKC_VULKAN_GPU_KERNELS");
          ::unsetenv("VKC_VULKAN_ATTN_SPLIT_KEYS");
          ASSERT_TRUE(gs.ok) << diags(gs.diagnostics);
          EXPECT_EQ(gs.tokens, greedy.tokens) << "on vulkan with GPU kernels, attention split";
          EXPECT_GT(gemv_dispatches(split), split_before);
        }
      }
    }
  }
}

TEST(DecoderExports, QuantizedKvCacheProgramsGenerateTheSameTokensOnEveryBackend) {
  // Every linear quantized (groups of 32 fit the tiny dims); decoding runs the split-K kernels, and
  // on a GPU (VKC_VULKAN_GPU_KERNELS=1 makes lavapipe choose as one) the matrix-vector ones. The
  // step export, and the same weights from the export with a symbolic sequence over a range
  // (prefill in chunks of up to 3): the same tokens from both programs on every backend.
  for (const char* recipe : {"8da4w:32-embedding", "int4-weight-only:32", "int8-weight-only"}) {
    std::vector<std::vector<int64_t>> tokens;
    for (const char* model : {"llama/llama_step_dynamo", "llama/llama_dyn_dynamo"}) {
      CompileOptions o;
      o.max_seq_len = 32;
      o.quantization_recipe = recipe;
      o.quantize_min_elements = 0;
      if (std::string(model).find("_dyn_") != std::string::npos) o.dim_ranges = {{"sequence", {1, 3}}};
      const CompileResult r = compile(kDir / model / "model.onnx", o);
      ASSERT_TRUE(r.ok) << recipe << " " << model << ": " << diags(r.diagnostics);
      for (const std::string& b : backends())
        for (const char* gpu_kernels : {"0", "1"}) {
          if (b == "cpu" && gpu_kernels[0] == '1') continue;
          ::setenv("VKC_VULKAN_GPU_KERNELS", gpu_kernels, 1);
          // On a GPU the 8da4w decode step's linears compute their rows' int8 parameters
          // themselves (no choose_qparams dispatch, linear_dq8ca_q4_gemv_rowq), those after an
          // RMSNorm with the norm inside (_norm: no rms_norm dispatch), the head too (the final
          // norm's input kept for it by the memory plan).
          const std::string rowq = "linear_dq8ca_q4_gemv_rowq_norm_f32_texture3d";
          // (Q, K and V as one dispatch, and gate and up: _multi_norm, _dual_norm.)
          const std::string rowq_norm = "linear_dq8ca_q4_gemv_rowq_multi_norm_f32_texture3d";
          const std::string rowq_dual = "linear_dq8ca_q4_gemv_rowq_dual_norm_f32_texture3d";
          const uint64_t dual_before = gemv_dispatches(rowq_dual);
          const uint64_t before = gemv_dispatches(rowq);
          const uint64_t norm_before = gemv_dispatches(rowq_norm);
          // int4: Q, K and V as one dispatch with the RMSNorm before them inside it.
          const std::string q4_multi = "linear_q4_gemv_multi_norm_f32_texture3d";
          const uint64_t q4_multi_before = gemv_dispatches(q4_multi);
          RunOptions ro;
          ro.backend = b;
          Session s = Session::open(std::span<const uint8_t>(r.pte), ro);
          const GenerateResult g = s.generate({17, 200, 45, 3, 99, 128, 250, 7}, 12);
          ::unsetenv("VKC_VULKAN_GPU_KERNELS");
          ASSERT_TRUE(g.ok) << recipe << " " << model << " on " << b << ": " << diags(g.diagnostics);
          tokens.push_back(g.tokens);
          if (gpu_kernels[0] == '1' && std::string(recipe).rfind("8da4w", 0) == 0 && std::string(model).find("_step_") != std::string::npos) {
            EXPECT_GT(gemv_dispatches(rowq), before) << recipe << " " << model;
            EXPECT_GT(gemv_dispatches(rowq_norm), norm_before) << recipe << " " << model;
            EXPECT_GT(gemv_dispatches(rowq_dual), dual_before) << recipe << " " << model;
          }
          if (gpu_kernels[0] == '1' && std::string(recipe).rfind("int4", 0) == 0) {
            EXPECT_GT(gemv_dispatches(q4_multi), q4_multi_before) << recipe << " " << model;
          }
        }
    }
    for (size_t i = 1; i < tokens.size(); ++i) EXPECT_EQ(tokens[i], tokens[0]) << recipe << " program " << i;
  }
}

// A copy of `model` in `dir` whose RMSNorm weights (the export's are ones) are 0.5 .. 1.7, so that
// a kernel applying them wrongly changes the logits.
fs::path with_norm_weights(const fs::path& model, const fs::path& dir) {
  onnx::ModelProto m;
  std::ifstream in(model, std::ios::binary);
  EXPECT_TRUE(m.ParseFromIstream(&in)) << model;
  int changed = 0;
  for (auto& t : *m.mutable_graph()->mutable_initializer()) {
    if (t.name().find("norm") == std::string::npos || t.data_type() != onnx::TensorProto_DataType_FLOAT || t.dims_size() != 1)
      continue;
    std::vector<float> v(static_cast<size_t>(t.dims(0)));
    for (size_t i = 0; i < v.size(); ++i) v[i] = 0.5f + 0.1f * static_cast<float>(i % 13);
    t.set_raw_data(v.data(), v.size() * sizeof(float));
    t.clear_float_data();
    ++changed;
  }
  EXPECT_GT(changed, 0) << "no norm weights in " << model;
  fs::create_directories(dir);
  std::ofstream out(dir / "model.onnx", std::ios::binary);
  EXPECT_TRUE(m.SerializeToOstream(&out));
  return dir / "model.onnx";
}

// The matrix-vector linears of a decode step (Q/K/V with the RMSNorm inside, the output and down
// projections with the residual add, gate and up with SiLU(gate) * up) on a GPU's kernels
// (VKC_VULKAN_GPU_KERNELS=1) give the cpu backend's logits at every step, not just its tokens:
// int4 in f32 (within 1e-4 of the largest logit), int4 and plain weights in fp16 (the norm's
// output is not rounded to f16 step by step inside the linears: within 1e-2), 8da4w in fp16 (those
// roundings move some inputs across an int8 step: within 3e-2; 2.7e-2 seen). The norms' weights
// are not ones.
TEST(DecoderExports, DecodeStepsOnTheMatrixVectorKernelsGiveTheCpuLogits) {
  const std::vector<std::string> all = backends();
  if (std::find(all.begin(), all.end(), "vulkan") == all.end()) GTEST_SKIP() << "no Vulkan device";
  const fs::path dir = fs::temp_directory_path() / ("vkc-norms-" + std::to_string(::getpid()));
  const fs::path model = with_norm_weights(kDir / "llama/llama_step_dynamo/model.onnx", dir);
  struct Case {
    const char* recipe;
    bool fp16;
    double tolerance;
    std::vector<std::string> kernels;
  };
  const std::vector<Case> cases = {
      {"int4-weight-only:32", false, 1e-4,
       {"linear_q4_gemv_multi_norm_f32_texture3d", "linear_q4_gemv_ep_f32_texture3d", "linear_q4_gemv_dual_norm_f32_texture3d"}},
      {"int4-weight-only:32", true, 1e-2,
       {"linear_q4_gemv_multi_norm_f16_texture3d", "linear_q4_gemv_ep_f16_texture3d", "linear_q4_gemv_dual_norm_f16_texture3d"}},
      {"", true, 1e-2,
       {"linear_gemv_multi_norm_f16_texture3d", "linear_gemv_ep_f16_texture3d", "linear_gemv_dual_norm_f16_texture3d"}},
      {"8da4w:32", true, 3e-2,
       {"linear_dq8ca_q4_gemv_rowq_multi_norm_f16_texture3d", "linear_dq8ca_q4_gemv_rowq_ep_f16_texture3d",
        "linear_dq8ca_q4_gemv_rowq_dual_norm_f16_texture3d"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.recipe) + (c.fp16 ? " fp16" : " fp32"));
    CompileOptions o;
    o.max_seq_len = 32;
    if (*c.recipe) o.quantization_recipe = c.recipe;
    o.quantize_min_elements = 0;
    o.force_fp16 = c.fp16;
    const CompileResult r = compile(model, o);
    ASSERT_TRUE(r.ok) << diags(r.diagnostics);
    const std::vector<int64_t> prompt = {17, 200, 45, 3, 99};
    auto steps = [&](const std::string& backend) {
      std::vector<std::vector<double>> logits;
      Session s = open_on(r.pte, backend);
      if (!s.ok()) return logits;
      for (size_t i = 0; i < prompt.size(); ++i) {
        const RunResult y = s.run({Tensor::of(ir::DType::Int64, {1, 1}, std::vector<int64_t>{prompt[i]}),
                                   Tensor::of(ir::DType::Int64, {1}, std::vector<int64_t>{static_cast<int64_t>(i)})});
        EXPECT_TRUE(y.ok) << backend << ": " << diags(y.diagnostics);
        if (!y.ok) break;
        logits.emplace_back();
        for (int64_t j = 0; j < y.outputs.at(0).numel(); ++j) logits.back().push_back(y.outputs.at(0).get_f(j));
      }
      return logits;
    };
    const auto cpu = steps("cpu");
    ASSERT_EQ(cpu.size(), prompt.size());
    // The kernels with subgroup sums (where the device has them, as lavapipe does) and without
    // (VKC_VULKAN_SUBGROUP=0: exactly the named variants); the 8da4w ones and the fp16 int4 ones
    // also on integer dot products (VKC_VULKAN_INT_DOT=1: the _dot variants, where the device has
    // the instruction) in workgroups of 64 (VKC_VULKAN_GEMV_TEAMS=1) and of 4 teams of 64 (_t4: the
    // default).
    const bool has_dot = c.kernels[0].find("dq8ca") != std::string::npos || (c.fp16 && c.kernels[0].find("_q4_") != std::string::npos);
    // "chained": the subgroup kernels again with VKC_VULKAN_CHAIN=1 (the dispatches that follow
    // one another wait on counters instead of barriers): the same logits, bit for bit.
    std::vector<std::vector<double>> unchained;
    for (const std::string mode : {"subgroup sums", "VKC_VULKAN_SUBGROUP=0", "VKC_VULKAN_INT_DOT=1", "teams", "chained"}) {
      const bool subgroups = mode != "VKC_VULKAN_SUBGROUP=0", teams = mode == "teams", chained = mode == "chained";
      const bool dot = mode == "VKC_VULKAN_INT_DOT=1" || teams;
      if (dot && (!has_dot || !runtime::vulkan_integer_dot_product())) continue;
      if (teams && !runtime::vulkan_subgroup_arithmetic()) continue;
      SCOPED_TRACE(mode);
      ::setenv("VKC_VULKAN_GPU_KERNELS", "1", 1);
      if (!subgroups) ::setenv("VKC_VULKAN_SUBGROUP", "0", 1);
      if (dot) ::setenv("VKC_VULKAN_INT_DOT", "1", 1);
      if (!teams) ::setenv("VKC_VULKAN_GEMV_TEAMS", "1", 1);
      if (chained) ::setenv("VKC_VULKAN_CHAIN", "1", 1);
      const uint64_t chains_before = runtime::vulkan_recorded_chains();
      const auto count = [&](const std::string& k) {
        if (teams) return runtime::vulkan_variant_dispatches(wide_variant(dot_variant(k), "_t4"));
        if (dot) return runtime::vulkan_variant_dispatches(dot_variant(k));
        return subgroups ? gemv_dispatches(k) : runtime::vulkan_variant_dispatches(k);
      };
      std::vector<uint64_t> before;
      for (const std::string& k : c.kernels) before.push_back(count(k));
      const auto gpu = steps("vulkan");
      ::unsetenv("VKC_VULKAN_GPU_KERNELS");
      ::unsetenv("VKC_VULKAN_SUBGROUP");
      ::unsetenv("VKC_VULKAN_INT_DOT");
      ::unsetenv("VKC_VULKAN_GEMV_TEAMS");
      ::unsetenv("VKC_VULKAN_CHAIN");
      for (size_t k = 0; k < before.size(); ++k)
        EXPECT_GT(count(c.kernels[k]), before[k]) << c.kernels[k] << " did not run";
      ASSERT_EQ(gpu.size(), prompt.size());
      if (mode == "subgroup sums") unchained = gpu;
      if (chained) {
        // (Q/K/V -> attention -> output -> gate/up -> down -> the next Q/K/V: 5 a layer at least)
        EXPECT_GE(runtime::vulkan_recorded_chains() - chains_before, 5u) << "no dispatch was chained";
        EXPECT_EQ(gpu, unchained) << "chained dispatches changed the logits";
      }
      for (size_t i = 0; i < prompt.size(); ++i) {
        ASSERT_EQ(gpu[i].size(), cpu[i].size());
        double scale = 0, worst = 0;
        for (size_t j = 0; j < cpu[i].size(); ++j) {
          scale = std::max(scale, std::abs(cpu[i][j]));
          worst = std::max(worst, std::abs(gpu[i][j] - cpu[i][j]));
        }
        EXPECT_LT(worst, c.tolerance * scale) << "step " << i << ": logits differ by " << worst << " of " << scale;
      }
    }
  }
  fs::remove_all(dir);
}

// Flash-decoding, one token a step for 150 steps over a cache of 160 rows, the logits at every
// step equal to the cpu backend's: the workgroup-per-part kernels (VKC_VULKAN_ATTN_DECODE=0) with
// (a) 2 keys a part, up to 80 parts a query row (so the last part to finish adds them up in two
// groups of 64); (b) at most 3 parts a row, of ceil(L / 3) keys each (parts that grow with the
// row's L keys, uneven at the end); (a) again without the subgroup reductions
// (VKC_VULKAN_SUBGROUP=0); and the one-row kernels, an invocation a key (the _dec variants, where
// the device has subgroup arithmetic): (c) parts of 32 keys (_w32: up to 5 parts a row, the last
// partial, added up by the last to finish) and (d) of 256 (one part: the output written at once);
// and the kernels by kv head (the _gqa variants, the default where the device has subgroup
// arithmetic: a workgroup per kv head and part for its 2 query heads) with (e) (a)'s parts, (f)
// (b)'s and (g) none (VKC_VULKAN_ATTN_SPLIT_KEYS=0: one part, its keys in tiles, the output
// written at once), and (h) by kv head with 80 workgroups a row, but its keys in at most 3 parts
// (VKC_VULKAN_ATTN_ROW_PARTS=3: the others stay empty). The others run with VKC_VULKAN_ATTN_GQA=0,
// and with as many parts a row as workgroups (VKC_VULKAN_ATTN_ROW_PARTS=0).
TEST(DecoderExports, AttentionSplitInManyPartsGivesTheCpuLogitsAtEveryStep) {
  const std::vector<std::string> all = backends();
  if (std::find(all.begin(), all.end(), "vulkan") == all.end()) GTEST_SKIP() << "no Vulkan device";
  CompileOptions o;
  o.max_seq_len = 160;
  const CompileResult r = compile(kDir / "llama/llama_step_dynamo/model.onnx", o);
  ASSERT_TRUE(r.ok) << diags(r.diagnostics);
  Session cpu = open_on(r.pte, "cpu");
  ASSERT_TRUE(cpu.ok());
  std::vector<std::vector<double>> expected;
  struct Config {
    const char* split_keys;
    const char* parts;
    bool subgroups;  // the _sg variant where the device has subgroup arithmetic, else VKC_VULKAN_SUBGROUP=0
    const char* decode;  // VKC_VULKAN_ATTN_DECODE: "0" the workgroup-per-part kernels, "32" / "1" the _dec ones
    bool gqa = false;    // the _gqa kernels (else VKC_VULKAN_ATTN_GQA=0)
    const char* row_parts = "0";  // VKC_VULKAN_ATTN_ROW_PARTS
  };
  const bool sg = runtime::vulkan_subgroup_arithmetic();
  for (const Config& c : {Config{"2", "80", true, "0"}, Config{"1", "3", true, "0"}, Config{"2", "80", false, "0"},
                          Config{"16", "1", true, "32"}, Config{"16", "1", true, "1"}, Config{"2", "80", true, "0", true},
                          Config{"1", "3", true, "0", true}, Config{"0", "1", true, "0", true},
                          Config{"2", "80", true, "0", true, "3"}}) {
    const bool decode = std::string(c.decode) != "0";
    if ((decode || c.gqa) && !sg) continue;
    SCOPED_TRACE(decode ? std::string("one-row kernel ") + (std::string(c.decode) == "32" ? "w32" : "w256")
                        : std::string(c.gqa ? "by kv head, " : "") + "split keys " + c.split_keys + ", parts " + c.parts +
                              (c.subgroups ? "" : ", no subgroups") + ", row parts " + c.row_parts);
    ::setenv("VKC_VULKAN_GPU_KERNELS", "1", 1);
    ::setenv("VKC_VULKAN_ATTN_SPLIT_KEYS", c.split_keys, 1);
    ::setenv("VKC_VULKAN_ATTN_PARTS", c.parts, 1);
    ::setenv("VKC_VULKAN_ATTN_DECODE", c.decode, 1);
    ::setenv("VKC_VULKAN_ATTN_ROW_PARTS", c.row_parts, 1);
    if (!c.gqa) ::setenv("VKC_VULKAN_ATTN_GQA", "0", 1);
    if (!c.subgroups) ::setenv("VKC_VULKAN_SUBGROUP", "0", 1);
    const std::string split = decode  ? std::string("sdpa_kv_cache_fused_sg_rope_dec") + (std::string(c.decode) == "32" ? "_w32" : "") + "_f32_texture3d"
                              : c.gqa ? "sdpa_kv_cache_fused_sg_rope_gqa_f32_texture3d"
                                      : "sdpa_kv_cache_fused_rope_split_f32_texture3d";
    const auto count = [&] {
      return c.subgroups && !decode && !c.gqa ? gemv_dispatches(split) : runtime::vulkan_variant_dispatches(split);
    };
    const uint64_t before = count();
    Session gpu = open_on(r.pte, "vulkan");
    ::unsetenv("VKC_VULKAN_GPU_KERNELS");
    ::unsetenv("VKC_VULKAN_ATTN_SPLIT_KEYS");
    ::unsetenv("VKC_VULKAN_ATTN_PARTS");
    ::unsetenv("VKC_VULKAN_ATTN_DECODE");
    ::unsetenv("VKC_VULKAN_ATTN_ROW_PARTS");
    ::unsetenv("VKC_VULKAN_ATTN_GQA");
    ::unsetenv("VKC_VULKAN_SUBGROUP");
    ASSERT_TRUE(gpu.ok());
    for (int64_t i = 0; i < 150; ++i) {
      const std::vector<Tensor> in = {Tensor::of(ir::DType::Int64, {1, 1}, std::vector<int64_t>{(i * 37 + 11) % 250}),
                                      Tensor::of(ir::DType::Int64, {1}, std::vector<int64_t>{i})};
      const RunResult b = gpu.run(in);
      ASSERT_TRUE(b.ok) << diags(b.diagnostics);
      if (expected.size() <= static_cast<size_t>(i)) {
        const RunResult a = cpu.run(in);
        ASSERT_TRUE(a.ok) << diags(a.diagnostics);
        std::vector<double> logits(a.outputs.at(0).numel());
        for (size_t j = 0; j < logits.size(); ++j) logits[j] = a.outputs.at(0).get_f(static_cast<int64_t>(j));
        expected.push_back(std::move(logits));
      }
      const std::vector<double>& want = expected[static_cast<size_t>(i)];
      ASSERT_EQ(static_cast<size_t>(b.outputs.at(0).numel()), want.size());
      double scale = 0, worst = 0;
      for (size_t j = 0; j < want.size(); ++j) {
        scale = std::max(scale, std::abs(want[j]));
        worst = std::max(worst, std::abs(want[j] - b.outputs.at(0).get_f(static_cast<int64_t>(j))));
      }
      ASSERT_LT(worst, 1e-4 * scale) << "step " << i << ": logits differ by " << worst << " of " << scale;
    }
    EXPECT_GT(count(), before);
  }
}

TEST(DecoderExports, KvCacheRefusesWhatItCannotKeep) {
  // A full-sequence graph has no cache to keep.
  CompileOptions o;
  o.max_seq_len = 32;
  o.dims["sequence"] = 4;
  const CompileResult r = compile(kDir / "llama/llama_seq_dynamo/model.onnx", o);
  ASSERT_FALSE(r.ok);
  EXPECT_NE(diags(r.diagnostics).find("no concat-style KV cache"), std::string::npos) << diags(r.diagnostics);
  // A prompt past the cache fails with one error before it runs (the program's get_max_context_len)
  // instead of writing out of bounds.
  CompileOptions small;
  small.max_seq_len = 8;
  const CompileResult c = compile(kDir / "llama/llama_step_dynamo/model.onnx", small);
  ASSERT_TRUE(c.ok) << diags(c.diagnostics);
  Session s = Session::open(std::span<const uint8_t>(c.pte));
  const GenerateResult g = s.generate({1, 2, 3, 4, 5, 6, 7}, 4);
  EXPECT_FALSE(g.ok);
  EXPECT_NE(diags(g.diagnostics).find("7 prompt + 4 new tokens need 10 positions; the program's cache holds 8"),
            std::string::npos)
      << diags(g.diagnostics);
}

}  // namespace
}  // namespace vkc::test
