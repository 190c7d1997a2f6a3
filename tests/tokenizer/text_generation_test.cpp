// Text in, text out with the vkc command: decoders whose vocabularies are trained tokenizers'
// (tests/models/tokenizers/{llama3,qwen2}_step, e2e.json: the prompt, transformers' greedy tokens
// and their text) compiled with --max-seq-len; `vkc run --tokenizer --prompt` prints transformers'
// text on every backend; the program's LLM-runner metadata; EOS, sampling, chat and bad input.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>

#include "compiler/cli_runner.h"
#include "vkc/runtime/vulkan.h"

namespace vkc::test {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

const fs::path kDir = fs::path(VKC_SOURCE_DIR) / "tests/models/tokenizers";

std::vector<std::string> backends() {
  std::vector<std::string> b = {"cpu"};
  if (!runtime::vulkan_device_name().empty()) b.push_back("vulkan");
  return b;
}

std::string q(const std::string& s) {  // one shell word
  std::string r = "'";
  for (char c : s) r += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return r + "'";
}

struct Model {
  std::string name, tokenizer;
};

class TextGeneration : public ::testing::TestWithParam<Model> {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / fmt::format("vkc_textgen_{}_{}", GetParam().name, ::getpid());
    fs::create_directories(dir_);
    std::ifstream in(kDir / GetParam().name / "e2e.json");
    e2e_ = Json::parse(in);
    pte_ = (dir_ / "model.pte").string();
    const CliResult c = run_vkc(fmt::format("compile {} --max-seq-len 64 --dim sequence=1..8 -o {}",
                                            q((kDir / GetParam().name / "model.onnx").string()), pte_));
    ASSERT_EQ(c.exit_code, 0) << c.err;
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string tok() const { return q((kDir / GetParam().tokenizer).string()); }
  fs::path dir_;
  Json e2e_;
  std::string pte_;
};

TEST_P(TextGeneration, PrintsTransformersText) {
  const std::string prompt = e2e_.at("prompt");
  const auto tokens = e2e_.at("hf_generate").get<std::vector<int64_t>>();
  for (const std::string& b : backends()) {
    const CliResult r = run_vkc(fmt::format("run {} --backend {} --tokenizer {} --prompt {} --max-new-tokens {}", pte_, b,
                                            tok(), q(prompt), tokens.size()));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, e2e_.at("text").get<std::string>() + "\n") << b;
    EXPECT_NE(r.err.find(fmt::format("{} tokens;", tokens.size())), std::string::npos) << r.err;
    const CliResult j = run_vkc(fmt::format("run {} --backend {} --tokenizer {} --prompt {} --max-new-tokens {} --json",
                                            pte_, b, tok(), q(prompt), tokens.size()));
    ASSERT_EQ(j.exit_code, 0) << j.err;
    const Json out = Json::parse(j.out);
    EXPECT_EQ(out.at("prompt_ids"), e2e_.at("prompt_ids")) << b;
    EXPECT_EQ(out.at("tokens").get<std::vector<int64_t>>(), tokens) << b;
    EXPECT_EQ(out.at("text"), e2e_.at("text")) << b;
  }
}

TEST_P(TextGeneration, MetadataEosAndSampling) {
  const auto tokens = e2e_.at("hf_generate").get<std::vector<int64_t>>();
  const CliResult meta = run_vkc("inspect " + pte_ + " --json");
  ASSERT_EQ(meta.exit_code, 0);
  const Json m = Json::parse(meta.out).at("constant_methods");
  EXPECT_EQ(m.at("get_max_seq_len"), "8");
  EXPECT_EQ(m.at("get_max_context_len"), "64");
  EXPECT_EQ(m.at("enable_dynamic_shape"), "true");
  EXPECT_EQ(m.at("get_vocab_size"), std::to_string(e2e_.at("vocab_size").get<int64_t>()));

  // An EOS id the greedy tokens reach ends generation there; compiled in with --eos, it is the
  // program's get_eos_ids, which vkc run stops at without being told.
  const int64_t eos = tokens.at(3);
  const size_t stop = static_cast<size_t>(std::find(tokens.begin(), tokens.end(), eos) - tokens.begin());
  const std::string with_eos = (dir_ / "eos.pte").string();
  ASSERT_EQ(run_vkc(fmt::format("compile {} --max-seq-len 64 --dim sequence=1..8 --eos {} -o {}",
                                q((kDir / GetParam().name / "model.onnx").string()), eos, with_eos))
                .exit_code,
            0);
  const CliResult r = run_vkc(fmt::format("run {} --tokenizer {} --prompt {} --json", with_eos, tok(),
                                          q(e2e_.at("prompt").get<std::string>())));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json out = Json::parse(r.out);
  EXPECT_EQ(out.at("tokens").get<std::vector<int64_t>>(), std::vector<int64_t>(tokens.begin(), tokens.begin() + stop + 1));
  EXPECT_TRUE(out.at("stopped_at_eos").get<bool>());

  // Sampling: the same seed, the same tokens; every token within the vocabulary.
  auto sample = [&](int seed) {
    const CliResult s = run_vkc(fmt::format("run {} --tokenizer {} --prompt hi --max-new-tokens 10 --temperature 1.5 "
                                            "--top-k 50 --top-p 0.95 --seed {} --json",
                                            pte_, tok(), seed));
    EXPECT_EQ(s.exit_code, 0) << s.err;
    return Json::parse(s.out).at("tokens").get<std::vector<int64_t>>();
  };
  const auto a = sample(1);
  EXPECT_EQ(a, sample(1));
  EXPECT_EQ(a.size(), 10u);
  for (int64_t t : a) EXPECT_LT(t, e2e_.at("vocab_size").get<int64_t>());
  EXPECT_NE(a, tokens);
}

INSTANTIATE_TEST_SUITE_P(Decoders, TextGeneration,
                         ::testing::Values(Model{"llama3_step", "llama3"}, Model{"qwen2_step", "qwen2/tokenizer.json"}),
                         [](const auto& info) { return info.param.tokenizer.substr(0, info.param.tokenizer.find('/')); });

TEST(TextGenerationErrors, BadInputIsOneClearError) {
  const fs::path dir = fs::temp_directory_path() / fmt::format("vkc_textgen_err_{}", ::getpid());
  fs::create_directories(dir);
  const std::string qwen = (dir / "qwen.pte").string(), short_cache = (dir / "short.pte").string();
  ASSERT_EQ(run_vkc(fmt::format("compile {} --max-seq-len 64 --dim sequence=1..8 -o {}",
                                q((kDir / "qwen2_step/model.onnx").string()), qwen)).exit_code, 0);
  ASSERT_EQ(run_vkc(fmt::format("compile {} --max-seq-len 12 --dim sequence=1..4 -o {}",
                                q((kDir / "qwen2_step/model.onnx").string()), short_cache)).exit_code, 0);
  auto expect_error = [](const CliResult& r, const std::string& what) {
    EXPECT_NE(r.exit_code, 0);
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(r.err_lines(), 1u) << r.err;
    EXPECT_NE(r.err.find(what), std::string::npos) << r.err;
  };
  // The llama3 tokenizer has 480 tokens; the Qwen2 program's logits 460.
  expect_error(run_vkc(fmt::format("run {} --tokenizer {} --prompt hi", qwen, q((kDir / "llama3").string()))),
               "it has 480 tokens, the program's logits 460: not this model's tokenizer");
  const std::string long_prompt(200, 'x');
  expect_error(run_vkc(fmt::format("run {} --tokenizer {} --prompt {}", short_cache, q((kDir / "qwen2").string()),
                                   q(long_prompt + " and more words to pass the cache of twelve positions"))),
               "the program's cache holds 12 positions");
  std::ofstream(dir / "tokenizer.json") << "{\"model\": {\"type\": \"BPE\", \"vocab\": ";
  expect_error(run_vkc(fmt::format("run {} --tokenizer {} --prompt hi", qwen, (dir / "tokenizer.json").string())),
               "tokenizer.json: is not valid JSON");
  expect_error(run_vkc(fmt::format("run {} --prompt hi", qwen)), "--prompt needs --tokenizer");
  expect_error(run_vkc(fmt::format("run {} --tokenizer {} --prompt hi --chat", qwen, q((kDir / "gpt2").string()))),
               "has no chat template");
  fs::remove_all(dir);
}

TEST(Tokenize, PrintsTheLibrarysIds) {
  std::ifstream in(kDir / "expected.json");
  const Json e = Json::parse(in);
  for (const std::string name : {"llama3", "sp_bpe"}) {
    const Json& c = e.at(name).at("cases").at(5);  // CJK
    const CliResult r = run_vkc(fmt::format("tokenize --tokenizer {} {}", q((kDir / e.at(name).at("file").get<std::string>()).string()),
                                            q(c.at("text").get<std::string>())));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, fmt::format("ids: {}\n", fmt::join(c.at("ids").get<std::vector<int64_t>>(), " "))) << name;
  }
  const CliResult j = run_vkc(fmt::format("tokenize --tokenizer {} --json '<|im_start|>user'", q((kDir / "qwen2").string())));
  ASSERT_EQ(j.exit_code, 0) << j.err;
  EXPECT_EQ(Json::parse(j.out).at("ids").at(0), 1);  // the special token, recognised in the text
}

TEST(Chat, WrapsThePromptInTheTemplate) {
  // --chat: the prompt ids are those of the template's rendering (Llama-3's, BOS written by it).
  const fs::path dir = fs::temp_directory_path() / fmt::format("vkc_chat_{}", ::getpid());
  fs::create_directories(dir);
  const std::string pte = (dir / "l3.pte").string();
  ASSERT_EQ(run_vkc(fmt::format("compile {} --max-seq-len 64 --dim sequence=1..8 -o {}",
                                q((kDir / "llama3_step/model.onnx").string()), pte)).exit_code, 0);
  const CliResult r = run_vkc(fmt::format("run {} --tokenizer {} --prompt hi --chat --max-new-tokens 2 --json", pte,
                                          q((kDir / "llama3").string())));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string rendered = "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nhi<|eot_id|>"
                               "<|start_header_id|>assistant<|end_header_id|>\n\n";
  const CliResult t = run_vkc(fmt::format("tokenize --tokenizer {} --json {}", q((kDir / "llama3").string()), q(rendered)));
  EXPECT_EQ(Json::parse(r.out).at("prompt_ids"), Json::parse(t.out).at("ids"));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace vkc::test
