// Tokenizers against the reference libraries: tests/models/tokenizers/expected.json holds the ids
// the `tokenizers` and `sentencepiece` Python libraries give for a multilingual text set (ASCII,
// accents, decomposed accents, CJK, emoji with joiners, whitespace runs, CRLF, special tokens
// written in the text) and their decodes, for tokenizers trained with those libraries
// (tests/models/make_tokenizers.py): GPT-2-, Llama-3- and Qwen2-style byte-level BPE, a Llama-2
// style SentencePiece BPE as tokenizer.json and as tokenizer.model, a SentencePiece unigram.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>

#include "vkc/tokenizer/tokenizer.h"

namespace vkc::tokenizer {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

const fs::path kDir = fs::path(VKC_SOURCE_DIR) / "tests/models/tokenizers";

Json expected() {
  std::ifstream in(kDir / "expected.json");
  return Json::parse(in);
}

class ReferenceIds : public ::testing::TestWithParam<std::string> {};

TEST_P(ReferenceIds, EncodeAndDecodeEqualTheLibrary) {
  const Json e = expected().at(GetParam());
  auto tok = load_tokenizer(kDir / e.at("file").get<std::string>());
  EXPECT_EQ(tok->vocab_size(), e.at("vocab_size").get<int64_t>());
  for (const Json& c : e.at("cases")) {
    const std::string text = c.at("text");
    const auto want = c.at("ids").get<std::vector<int64_t>>();
    EXPECT_EQ(tok->encode(text), want) << GetParam() << ": " << text;
    EXPECT_EQ(tok->decode(want), c.at("decoded").get<std::string>()) << GetParam() << ": " << text;
  }
}

INSTANTIATE_TEST_SUITE_P(Tokenizers, ReferenceIds,
                         ::testing::Values("gpt2", "llama3", "qwen2", "llama2_hf", "sp_bpe", "sp_unigram"));

TEST(Tokenizer, StreamedTextEqualsTheWholeDecode) {
  // Every prefix of each case's ids streamed: the pieces concatenate to decode(ids), and no piece
  // ends inside a character.
  const Json all = expected();
  for (const std::string name : {"gpt2", "llama3", "qwen2", "llama2_hf", "sp_bpe", "sp_unigram"}) {
    auto tok = load_tokenizer(kDir / all.at(name).at("file").get<std::string>());
    for (const Json& c : all.at(name).at("cases")) {
      const auto ids = c.at("ids").get<std::vector<int64_t>>();
      TextStream stream(*tok);
      std::string text;
      for (int64_t id : ids) {
        const std::string piece = stream.push(id);
        EXPECT_EQ(piece.find("\xEF\xBF\xBD"), std::string::npos) << name << ": " << c.at("text");
        text += piece;
      }
      text += stream.finish();
      EXPECT_EQ(text, tok->decode(ids)) << name;
    }
  }
}

TEST(Tokenizer, ModelTokensComeFromTheFilesBeside) {
  auto l3 = load_tokenizer(kDir / "llama3");  // a folder: its tokenizer.json
  EXPECT_EQ(l3->kind(), "hf-bpe");
  EXPECT_EQ(l3->model_tokens().eos, std::vector<int64_t>{*l3->token_id("<|eot_id|>")});
  EXPECT_EQ(l3->model_tokens().bos, l3->token_id("<|begin_of_text|>"));
  EXPECT_FALSE(l3->model_tokens().chat_template.empty());
  EXPECT_TRUE(l3->is_special(*l3->token_id("<|eot_id|>")));
  auto sp = load_tokenizer(kDir / "sp_bpe/tokenizer.model");
  EXPECT_EQ(sp->kind(), "sentencepiece");
  EXPECT_EQ(sp->model_tokens().bos, 1);
  EXPECT_EQ(sp->model_tokens().eos, std::vector<int64_t>{2});
}

std::string error_of(const fs::path& p) {
  try {
    load_tokenizer(p);
  } catch (const TokenizerError& e) {
    return e.what();
  }
  return "";
}

TEST(Tokenizer, BadFilesAreOneErrorNamingTheFile) {
  const fs::path dir = fs::temp_directory_path() / fmt::format("vkc_tok_{}", ::getpid());
  fs::create_directories(dir);
  auto write = [&](const std::string& name, const std::string& body) {
    std::ofstream(dir / name) << body;
    return dir / name;
  };
  const fs::path truncated = write("truncated.json", R"({"model": {"type": "BPE", "vocab": {"a": 0)");
  EXPECT_NE(error_of(truncated).find(truncated.string() + ": is not valid JSON"), std::string::npos) << error_of(truncated);
  const fs::path wordpiece = write("wp.json", R"({"model": {"type": "WordPiece", "vocab": {}}})");
  EXPECT_NE(error_of(wordpiece).find("model type 'WordPiece' is not supported"), std::string::npos);
  const fs::path bad_merge = write("merge.json", R"({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": ["a b"]}})");
  EXPECT_NE(error_of(bad_merge).find("merge 'a b' names a token outside the vocabulary"), std::string::npos);
  const fs::path pre = write("pre.json", R"({"model": {"type": "BPE", "vocab": {}, "merges": []},
                                             "pre_tokenizer": {"type": "BertPreTokenizer"}})");
  EXPECT_NE(error_of(pre).find("pre-tokenizer 'BertPreTokenizer' is not supported"), std::string::npos);
  const fs::path sp = write("tokenizer.model", "not a protobuf");
  EXPECT_NE(error_of(sp).find(sp.string() + ": is not a SentencePiece model"), std::string::npos) << error_of(sp);
  EXPECT_NE(error_of(dir / "missing.json").find("cannot be read"), std::string::npos);
  auto ok = load_tokenizer(kDir / "gpt2/tokenizer.json");
  EXPECT_THROW(ok->encode("\xff bad"), TokenizerError);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace vkc::tokenizer
