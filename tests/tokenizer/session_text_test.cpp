// vkc::Session::generate_text, the library's text in / text out: the Qwen2 decoder of
// tests/models/tokenizers compiled through the API generates transformers' text, streamed pieces
// adding up to it; an error is one diagnostic.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>

#include "vkc/vkc.h"

namespace vkc {
namespace {

const std::filesystem::path kDir = std::filesystem::path(VKC_SOURCE_DIR) / "tests/models/tokenizers";

TEST(SessionText, GeneratesTransformersText) {
  std::ifstream in(kDir / "qwen2_step/e2e.json");
  const nlohmann::json e2e = nlohmann::json::parse(in);
  CompileOptions options;
  options.max_seq_len = 48;
  options.dim_ranges["sequence"] = {1, 4};
  const CompileResult c = compile(kDir / "qwen2_step/model.onnx", options);
  ASSERT_TRUE(c.ok);
  auto tok = tokenizer::load_tokenizer(kDir / "qwen2");
  Session s = Session::open(std::span<const uint8_t>(c.pte));
  ASSERT_TRUE(s.ok());
  TextGenerateOptions o;
  o.max_new_tokens = e2e.at("hf_generate").size();
  std::string streamed;
  o.on_text = [&](std::string_view piece) { streamed += piece; };
  const TextResult r = s.generate_text(*tok, e2e.at("prompt"), o);
  ASSERT_TRUE(r.ok) << (r.diagnostics.empty() ? "" : r.diagnostics[0].message);
  EXPECT_EQ(r.tokens, e2e.at("hf_generate").get<std::vector<int64_t>>());
  EXPECT_EQ(r.text, e2e.at("text").get<std::string>());
  EXPECT_EQ(streamed, r.text);

  // The tokenizer's EOS (<|im_end|>, from tokenizer_config.json) ends generation when no other is
  // given; with one the model never picks, 48 positions cut a budget of 100 to the cache, with a note.
  Session stops = Session::open(std::span<const uint8_t>(c.pte));
  o.max_new_tokens = 100;
  o.on_text = nullptr;
  const TextResult at_eos = stops.generate_text(*tok, e2e.at("prompt"), o);
  ASSERT_TRUE(at_eos.ok);
  EXPECT_TRUE(at_eos.stopped_at_eos);
  EXPECT_EQ(at_eos.tokens.back(), *tok->token_id("<|im_end|>"));
  Session again = Session::open(std::span<const uint8_t>(c.pte));
  o.eos = {tok->vocab_size() - 1};
  const TextResult cut = again.generate_text(*tok, e2e.at("prompt"), o);
  ASSERT_TRUE(cut.ok);
  EXPECT_FALSE(cut.stopped_at_eos);
  EXPECT_EQ(cut.tokens.size(), 48 - cut.prompt_ids.size() + 1);
  ASSERT_EQ(cut.notes.size(), 1u);

  Session third = Session::open(std::span<const uint8_t>(c.pte));
  const TextResult bad = third.generate_text(*tokenizer::load_tokenizer(kDir / "llama3"), "hi");
  EXPECT_FALSE(bad.ok);
  ASSERT_EQ(bad.diagnostics.size(), 1u);
  EXPECT_NE(bad.diagnostics[0].message.find("not this model's tokenizer"), std::string::npos);
}

}  // namespace
}  // namespace vkc
