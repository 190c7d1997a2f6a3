// Real exporter output for encoder-decoder models (tests/models/encoder_decoder/, made by
// export_encoder_decoder.py): a Whisper-shaped speech recognizer (TorchScript and dynamo exports)
// and a T5-shaped text-to-text model (TorchScript; torch.export fails on its encoder), each an
// encoder graph and a decoder step with a concat-style self-attention cache that reads the encoder's
// output every step.
// - The encoders and the decoder steps (dims fixed per data set) compute onnxruntime's numbers.
// - `--encoder ENC --max-seq-len N` makes one program: its "encoder" method computes every layer's
//   cross-attention keys and values once, the decoder step takes them as context inputs beside
//   tokens and input_pos and keeps its self-attention cache inside (T5's relative position bias
//   computed from input_pos over the cache kept by update_cache); greedy generation from the decoder
//   start ids equals the full-sequence greedy loop of transformers' model (and its generate()).
// - With a --dim range the encoder method and the step resize as they run: T5 texts of several
//   lengths in one program, Whisper's start ids as one prefill chunk.
// - Encoder and decoder step that do not fit fail the compile with one error naming both.
// Each on the cpu backend and, where a Vulkan device exists (lavapipe in CI), on the vulkan backend.
#include <gtest/gtest.h>

#include <fstream>

#include "decoder_test_util.h"
#include "vkc/runtime/backend.h"
#include "vkc/runtime/generate.h"
#include "vkc/serializer/pte_reader.h"

namespace vkc::test {
namespace {

const fs::path kDir = corpus("encoder_decoder");

struct Model {
  std::string name, exporter;
  std::map<std::string, int64_t> encoder_dims;  // the encoder's symbolic dims, fixed
  fs::path dir() const { return kDir / name; }
  fs::path encoder() const { return dir() / (name + "_encoder_" + exporter); }
  fs::path decoder() const { return dir() / (name + "_decoder_" + exporter); }
};

const std::vector<Model> kModels = {
    {"whisper", "legacy", {}}, {"whisper", "dynamo", {}}, {"t5", "legacy", {{"encoder_sequence", 10}}}};

nlohmann::json greedy_json(const Model& m) {
  std::ifstream f(m.dir() / "greedy.json");
  return nlohmann::json::parse(f);
}

CompileOptions program_options(const Model& m) {
  CompileOptions o;
  o.max_seq_len = 32;
  o.encoder = m.encoder() / "model.onnx";
  o.dims = m.encoder_dims;
  o.dims["sequence"] = 1;
  return o;
}

// The one-program compile of `m` with dim `name` a range MIN..MAX instead of fixed (a failure names
// the diagnostics; check r.ok).
CompileResult compile_with_range(const Model& m, const std::string& name, int64_t min, int64_t max) {
  CompileOptions o = program_options(m);
  o.dims.erase(name);
  o.dim_ranges = {{name, {min, max}}};
  CompileResult r = compile(m.decoder() / "model.onnx", o);
  EXPECT_TRUE(r.ok) << diags(r.diagnostics);
  return r;
}

TEST(EncoderDecoderExports, EncodersAndDecoderStepsMatchOnnxruntime) {
  for (const Model& m : kModels) {
    SCOPED_TRACE(m.name + " " + m.exporter);
    CompileOptions eo;
    eo.dims = m.encoder_dims;
    CompileResult enc = compile(m.encoder() / "model.onnx", eo);
    ASSERT_TRUE(enc.ok) << diags(enc.diagnostics);
    ops_of(enc);
    expect_every_set_matches(m.encoder(), enc.pte);
    // Sets 1 and 2: 2 tokens at a past of 3, 1 token at a past of 5 (set 0's past is empty).
    for (const char* set : {"test_data_set_1", "test_data_set_2"}) {
      const auto inputs = read_set(m.decoder() / set, "input");
      CompileOptions o;
      o.dims = {{"sequence", inputs.at(0).shape.at(1)}, {"past", inputs.at(2).shape.at(2)}};
      o.dims.insert(m.encoder_dims.begin(), m.encoder_dims.end());  // (T5's step reads any encoder length)
      expect_set_compiles_and_matches(m.decoder(), set, inputs, o);
    }
  }
}

TEST(EncoderDecoderExports, OneProgramGeneratesTransformersGreedyTokens) {
  for (const Model& m : kModels) {
    SCOPED_TRACE(m.name + " " + m.exporter);
    const nlohmann::json greedy = greedy_json(m);
    const std::vector<int64_t> want = ints(greedy["greedy_full_sequence"]);
    if (greedy.contains("hf_generate")) {  // Whisper's generate() leaves out the decoder's start ids past the first
      const std::vector<int64_t> hf = ints(greedy["hf_generate"]);
      EXPECT_TRUE(std::equal(hf.rbegin(), hf.rend(), want.rbegin())) << "the reference tokens disagree";
    }
    const CompileResult r = compile(m.decoder() / "model.onnx", program_options(m));
    ASSERT_TRUE(r.ok) << diags(r.diagnostics);
    ops_of(r);
    const auto encoder_inputs = read_set(m.encoder() / "test_data_set_0", "input");
    for (const std::string& b : backends())
      for (const char* gpu_kernels : {"0", "1"}) {
        if (gpu_kernels[0] == '1' && b != "vulkan") continue;
        ::setenv("VKC_VULKAN_GPU_KERNELS", gpu_kernels, 1);
        RunOptions ro;
        ro.backend = b;
        Session s = Session::open(std::span<const uint8_t>(r.pte), ro);
        ASSERT_TRUE(s.ok()) << diags(s.diagnostics());
        // tokens, input_pos, then each decoder layer's cross-attention keys and values
        // [1, heads, encoder length, head dim]: computed by the encoder method, not by every step.
        ASSERT_EQ(s.inputs().size(), 2u + 4u);
        for (size_t i = 2; i < s.inputs().size(); ++i) EXPECT_EQ(s.inputs()[i].shape.size(), 4u) << i;
        const GenerateResult g = s.generate(ints(greedy["decoder_start_ids"]), want.size(), encoder_inputs);
        ::unsetenv("VKC_VULKAN_GPU_KERNELS");
        ASSERT_TRUE(g.ok) << diags(g.diagnostics);
        EXPECT_EQ(g.tokens, want) << "on " << b << (gpu_kernels[0] == '1' ? " with GPU kernels" : "");
        // On the GPU the steps run as a loop there, the cross-attention inputs staged once.
        EXPECT_EQ(g.device_loop, b == "vulkan") << "on " << b;
      }
  }
}

// A text of any length up to a bound: `--dim encoder_sequence=4..24` compiles the encoder method and
// the step (their cross-attention keys and values [1, heads, T, head dim]) as one program that
// resizes; texts of 6, 10 and 13 tokens give transformers' greedy tokens for each.
TEST(EncoderDecoderExports, ARangeOfEncoderLengthsIsOneProgram) {
  const Model& m = kModels.back();
  ASSERT_EQ(m.name, "t5");
  const CompileResult r = compile_with_range(m, "encoder_sequence", 4, 24);
  ASSERT_TRUE(r.ok);
  ops_of(r);
  const nlohmann::json greedy = greedy_json(m);
  std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> cases;  // encoder ids, tokens
  const auto first = read_set(m.encoder() / "test_data_set_0", "input").at(0);
  std::vector<int64_t> ids(static_cast<size_t>(first.shape.at(1)));
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = first.get_i(static_cast<int64_t>(i));
  cases.push_back({ids, ints(greedy["greedy_full_sequence"])});
  ASSERT_GE(greedy["other_inputs"].size(), 2u);
  for (const auto& other : greedy["other_inputs"]) cases.push_back({ints(other["encoder_input"][0]), ints(other["greedy_full_sequence"])});
  for (const std::string& b : backends()) {
    Session s = open_on(r.pte, b);
    ASSERT_TRUE(s.ok());
    for (const auto& [text, want] : cases) {
      const Tensor input = Tensor::of(ir::DType::Int64, {1, static_cast<int64_t>(text.size())}, text);
      const GenerateResult g = s.generate(ints(greedy["decoder_start_ids"]), want.size(), {input});
      ASSERT_TRUE(g.ok) << diags(g.diagnostics);
      EXPECT_EQ(g.tokens, want) << text.size() << " encoder tokens on " << b;
    }
  }
}

// `--dim sequence=1..3` with --encoder: Whisper's three start ids go in as one chunk (prefill),
// then one token a step, in one program and one cache.
TEST(EncoderDecoderExports, StartIdsInOneChunk) {
  const Model& m = kModels.front();
  ASSERT_EQ(m.name, "whisper");
  const CompileResult r = compile_with_range(m, "sequence", 1, 3);
  ASSERT_TRUE(r.ok);
  const nlohmann::json greedy = greedy_json(m);
  const std::vector<int64_t> start = ints(greedy["decoder_start_ids"]), want = ints(greedy["greedy_full_sequence"]);
  ASSERT_EQ(start.size(), 3u);
  for (const std::string& b : backends()) {
    Session s = open_on(r.pte, b);
    ASSERT_TRUE(s.ok());
    ASSERT_TRUE(s.inputs().at(0).dynamic);
    const GenerateResult g = s.generate(start, want.size(), read_set(m.encoder() / "test_data_set_0", "input"));
    ASSERT_TRUE(g.ok) << diags(g.diagnostics);
    EXPECT_EQ(g.tokens, want) << "on " << b;
  }
}

// optimum's form (export_optimum.py: optimum-onnx's main_export): encoder_model.onnx (input_ids,
// attention_mask) and decoder_model_merged.onnx, whose cache branch takes the cross-attention keys
// and values as past_key_values.i.encoder.* inputs that the branch without caches computes from
// the encoder's output. One program: the encoder method computes them (take-cache-branch turns the
// passed-along cache into its computation, --encoder hoists it), the step's encoder_attention_mask
// is all ones; over a range of encoder lengths, texts of 6, 10 and 13 tokens give transformers'
// greedy tokens (which onnxruntime's loop over optimum's files gives too, greedy.json).
TEST(EncoderDecoderExports, OptimumMergedDecoderIsOneProgram) {
  const fs::path dir = kDir / "t5_optimum";
  std::ifstream f(dir / "greedy.json");
  const nlohmann::json greedy = nlohmann::json::parse(f);
  CompileOptions o;
  o.max_seq_len = 16;
  o.encoder = dir / "encoder_model.onnx";
  o.dims = {{"batch_size", 1}, {"decoder_sequence_length", 1}};
  o.dim_ranges = {{"encoder_sequence_length", {4, 24}}};
  const CompileResult r = compile(dir / "decoder_model_merged.onnx", o);
  ASSERT_TRUE(r.ok) << diags(r.diagnostics);
  ops_of(r);
  ASSERT_GE(greedy["inputs"].size(), 3u);
  for (const std::string& b : backends()) {
    Session s = open_on(r.pte, b);
    ASSERT_TRUE(s.ok());
    ASSERT_EQ(s.inputs().size(), 2u + 4u);  // tokens, input_pos, each layer's cross keys and values
    for (const auto& in : greedy["inputs"]) {
      const std::vector<int64_t> text = ints(in["input_ids"]), want = ints(in["greedy_full_sequence"]);
      EXPECT_EQ(ints(in["onnxruntime_merged"]), want);
      const int64_t t = static_cast<int64_t>(text.size());
      const std::vector<Tensor> encoder_inputs = {Tensor::of(ir::DType::Int64, {1, t}, text),
                                                  Tensor::of(ir::DType::Int64, {1, t}, std::vector<int64_t>(text.size(), 1))};
      const GenerateResult g = s.generate(ints(greedy["decoder_start_ids"]), want.size(), encoder_inputs);
      ASSERT_TRUE(g.ok) << diags(g.diagnostics);
      EXPECT_EQ(g.tokens, want) << t << " encoder tokens on " << b;
    }
  }
}

TEST(EncoderDecoderExports, TheStepWithoutItsEncoderTakesTheEncoderOutputEachCall) {
  // Without --encoder the decoder step is a KV-cache program whose context input is the encoder's
  // output; given it each call, it generates the same tokens.
  const Model& m = kModels.front();
  CompileOptions o = program_options(m);
  o.encoder.clear();
  const CompileResult dec = compile(m.decoder() / "model.onnx", o);
  ASSERT_TRUE(dec.ok) << diags(dec.diagnostics);
  const auto encoded = read_set(m.encoder() / "test_data_set_0", "output");
  Session s = Session::open(std::span<const uint8_t>(dec.pte));
  ASSERT_TRUE(s.ok()) << diags(s.diagnostics());
  ASSERT_EQ(s.inputs().size(), 3u);
  const GenerateResult none = s.generate({1}, 2);
  ASSERT_FALSE(none.ok);
  EXPECT_NE(diags(none.diagnostics).find("encoder method"), std::string::npos) << diags(none.diagnostics);
  // Through the runtime's generate with the context given: tokens as with the encoder method.
  runtime::GenerateOptions go;
  go.max_new_tokens = 12;
  go.context = encoded;
  auto backend = runtime::make_backend("cpu");
  runtime::Executor exec = runtime::Executor::from_pte(serializer::read_pte_bytes(dec.pte), *backend);
  const nlohmann::json greedy = greedy_json(m);
  EXPECT_EQ(runtime::generate(exec, ints(greedy["decoder_start_ids"]), go).tokens, ints(greedy["greedy_full_sequence"]));
}

TEST(EncoderDecoderExports, AnEncoderThatDoesNotFitTheDecoderIsOneError) {
  // Whisper's decoder step reads [1, 16, 32]; T5's encoder gives [1, 10, 32].
  CompileOptions o = program_options(kModels.front());
  o.encoder = kModels.back().encoder() / "model.onnx";
  o.dims["encoder_sequence"] = 10;
  const CompileResult r = compile(kModels.front().decoder() / "model.onnx", o);
  ASSERT_FALSE(r.ok);
  ASSERT_EQ(r.diagnostics.size(), 1u) << diags(r.diagnostics);
  const std::string msg = r.diagnostics[0].message;
  EXPECT_NE(msg.find("encoder_hidden_states"), std::string::npos) << msg;
  EXPECT_NE(msg.find("last_hidden_state"), std::string::npos) << msg;
  EXPECT_TRUE(r.pte.empty());
  // --encoder needs the decoder step's cache.
  o = program_options(kModels.front());
  o.max_seq_len = 0;
  const CompileResult no_cache = compile(kModels.front().decoder() / "model.onnx", o);
  ASSERT_FALSE(no_cache.ok);
  EXPECT_NE(diags(no_cache.diagnostics).find("--max-seq-len"), std::string::npos) << diags(no_cache.diagnostics);
}

}  // namespace
}  // namespace vkc::test
