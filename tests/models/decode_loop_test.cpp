// Greedy decoding kept on the GPU (runtime/generate.h, backend.h's DecodeLoop; the vulkan backend
// records a step and greedy_token.glsl, which feeds the step's token and position to the next, a
// batch of steps to a command buffer): over the tiny decoders of tests/models/decoders/, the loop
// gives the tokens the host loop gives (a step, a round trip through the host's sampler), whatever
// its batch size and wherever generation stops; it keeps to the first `vocab` logits; and it is
// taken only where it applies (greedy, one-token steps, a backend that keeps one).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "export_test_util.h"
#include "vkc/runtime/backend.h"
#include "vkc/runtime/executor.h"
#include "vkc/runtime/generate.h"
#include "vkc/serializer/pte_reader.h"

namespace vkc::test {
namespace {

namespace fs = std::filesystem;
const fs::path kDir = corpus("decoders");
const std::vector<int64_t> kPrompt = {1, 5, 9, 3};

// VKC_VULKAN_DECODE_LOOP for one scope (0: the host loop; N: batches of N steps).
struct LoopBatch {
  explicit LoopBatch(const char* n) { ::setenv("VKC_VULKAN_DECODE_LOOP", n, 1); }
  ~LoopBatch() { ::unsetenv("VKC_VULKAN_DECODE_LOOP"); }
};

runtime::GenerateResult generate(const std::vector<uint8_t>& pte, const char* backend,
                                 const runtime::GenerateOptions& options) {
  auto b = runtime::make_backend(backend);
  runtime::Executor e = runtime::Executor::from_pte(serializer::read_pte_bytes(pte), *b);
  return runtime::generate(e, kPrompt, options);
}

CompileResult compiled(const fs::path& model, CompileOptions o) {
  o.max_seq_len = 32;
  CompileResult r = compile(model, o);
  EXPECT_TRUE(r.ok) << diags(r.diagnostics);
  return r;
}

// The step programs of the tiny Llama in fp32 (logits in a texture, and in a buffer: textures 16
// texels wide), fp16, int4 and 8da4w, and its program whose token count resizes (--dim
// sequence=1..4: the one-token instance loops): 21 tokens (20 steps, a whole number of neither 3
// nor 8) in batches of 1, 3 and 8 equal the host loop's, on the device each time. Then in batches
// of 3 with the loop's own dispatches chained (VKC_VULKAN_CHAIN: a dispatch waits on a count the
// one before raises, not at a barrier; on by default on NVIDIA): the step before's greedy_token
// into the token's copy into the embedding's input, that copy into the embedding (the int4
// table's too), the lm head into greedy_token. Named (only those twins: at least the copy ->
// embedding link in every recorded step) and, in the 8da4w program, all twins.
TEST(DecodeLoop, GreedyStepsOnTheDeviceGiveTheHostLoopsTokens) {
  if (runtime::vulkan_device_name().empty()) GTEST_SKIP() << "no Vulkan device";
  CompileOptions buffers, fp16, int4, q4, resizing;
  buffers.texture_limits = TextureLimits{16, 2048, 2048};  // (the 256 logits are 64 texels)
  fp16.force_fp16 = true;
  int4.quantization_recipe = "int4-weight-only-fp16";
  int4.quantize_min_elements = 0;  // (every linear of the tiny model)
  q4.quantization_recipe = "8da4w-fp16-embedding";
  q4.quantize_min_elements = 0;
  resizing.dim_ranges = {{"sequence", {1, 4}}};
  const fs::path step = kDir / "llama/llama_step_dynamo/model.onnx";
  const std::vector<std::pair<std::string, CompileResult>> programs = {
      {"fp32", compiled(step, {})},
      {"fp32 buffers", compiled(step, buffers)},
      {"fp16", compiled(step, fp16)},
      {"int4", compiled(step, int4)},
      {"8da4w", compiled(step, q4)},
      {"resizing", compiled(kDir / "llama/llama_dyn_dynamo/model.onnx", resizing)}};
  for (const auto& [name, r] : programs) {
    SCOPED_TRACE(name);
    ASSERT_TRUE(r.ok);
    runtime::GenerateOptions o;
    o.max_new_tokens = 21;
    runtime::GenerateResult host;
    {
      LoopBatch off("0");
      host = generate(r.pte, "vulkan", o);
    }
    EXPECT_FALSE(host.device_loop);
    ASSERT_EQ(host.tokens.size(), 21u);
    for (const char* batch : {"1", "3", "8"}) {
      LoopBatch on(batch);
      const runtime::GenerateResult got = generate(r.pte, "vulkan", o);
      EXPECT_TRUE(got.device_loop) << "batch " << batch;
      EXPECT_EQ(got.tokens, host.tokens) << "batch " << batch;
    }
    LoopBatch on("3");
    for (const char* chain : {"greedy_token,copy_i32,embedding", "1"}) {
      if (std::string(chain) == "1" && name != "8da4w") continue;  // (lavapipe polls slowly: once)
      SCOPED_TRACE(chain);
      ::setenv("VKC_VULKAN_CHAIN", chain, 1);
      const uint64_t before = runtime::vulkan_recorded_chains();
      const runtime::GenerateResult got = generate(r.pte, "vulkan", o);
      ::unsetenv("VKC_VULKAN_CHAIN");
      EXPECT_TRUE(got.device_loop);
      EXPECT_EQ(got.tokens, host.tokens);
      // (20 steps: recordings of 3 and 2 steps, at least a link a step)
      EXPECT_GE(runtime::vulkan_recorded_chains() - before, 5u) << "the loop's dispatches did not chain";
    }
  }
  // The greedy token read the logits from a texture and from a buffer, in f32 and f16.
  for (const char* v : {"greedy_token_f32_texture3d", "greedy_token_f32_buffer", "greedy_token_f16_texture3d"})
    EXPECT_GT(runtime::vulkan_variant_dispatches(v), 0u) << v;
}

// Stopping at a stop id in the middle of a batch: the tokens end at its first occurrence, as the
// host loop's do, each given to on_token once and in order; the same executor generates again from
// an empty cache (the loop kept) with the same tokens; with only the first 40 logits as candidates
// (a tokenizer smaller than the program's vocabulary) the tokens are the host loop's under the same
// limit; sampling at a temperature, and the cpu backend, keep the host loop.
TEST(DecodeLoop, StopsWhereTheHostLoopStopsAndKeepsToTheVocabulary) {
  if (runtime::vulkan_device_name().empty()) GTEST_SKIP() << "no Vulkan device";
  CompileOptions fp16;
  fp16.force_fp16 = true;
  const CompileResult r = compiled(kDir / "llama/llama_step_dynamo/model.onnx", fp16);
  ASSERT_TRUE(r.ok);
  runtime::GenerateOptions o;
  o.max_new_tokens = 24;
  runtime::GenerateResult host, host40;
  {
    LoopBatch off("0");
    host = generate(r.pte, "vulkan", o);
    runtime::GenerateOptions o40 = o;
    o40.vocab = 40;
    host40 = generate(r.pte, "vulkan", o40);
  }
  ASSERT_EQ(host.tokens.size(), 24u);
  for (int64_t t : host40.tokens) EXPECT_LT(t, 40);
  LoopBatch on("8");
  // A stop id first met at token 10 (the 9th step: inside the second batch of 8).
  size_t at = 10;
  while (at < host.tokens.size() &&
         std::find(host.tokens.begin(), host.tokens.begin() + static_cast<std::ptrdiff_t>(at), host.tokens[at]) !=
             host.tokens.begin() + static_cast<std::ptrdiff_t>(at))
    ++at;
  ASSERT_LT(at, host.tokens.size()) << "no token first met after the first batch";
  runtime::GenerateOptions stop = o;
  stop.stop_ids = {host.tokens[at]};
  std::vector<int64_t> streamed;
  stop.on_token = [&](int64_t t) { streamed.push_back(t); };
  auto b = runtime::make_backend("vulkan");
  runtime::Executor e = runtime::Executor::from_pte(serializer::read_pte_bytes(r.pte), *b);
  const runtime::GenerateResult got = runtime::generate(e, kPrompt, stop);
  EXPECT_TRUE(got.device_loop);
  EXPECT_TRUE(got.stopped);
  const std::vector<int64_t> want(host.tokens.begin(), host.tokens.begin() + static_cast<std::ptrdiff_t>(at + 1));
  EXPECT_EQ(got.tokens, want);
  EXPECT_EQ(streamed, want);
  const runtime::GenerateResult again = runtime::generate(e, kPrompt, o);
  EXPECT_TRUE(again.device_loop);
  EXPECT_EQ(again.tokens, host.tokens) << "a second generation on the same executor";
  runtime::GenerateOptions o40 = o;
  o40.vocab = 40;
  const runtime::GenerateResult got40 = runtime::generate(e, kPrompt, o40);
  EXPECT_TRUE(got40.device_loop);
  EXPECT_EQ(got40.tokens, host40.tokens);
  runtime::GenerateOptions sampled = o;
  sampled.sampling.temperature = 0.7;
  sampled.sampling.seed = 3;
  EXPECT_FALSE(runtime::generate(e, kPrompt, sampled).device_loop);
  EXPECT_FALSE(generate(r.pte, "cpu", o).device_loop);
}

}  // namespace
}  // namespace vkc::test
