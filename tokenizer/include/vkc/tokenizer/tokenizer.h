// Tokenizers as the models ship them: HF `tokenizer.json` (byte-level and SentencePiece-style BPE:
// GPT-2, Llama-2/3, Qwen, Mistral...) and SentencePiece `tokenizer.model` files (Llama-2,
// TinyLlama, Gemma, T5). Text to ids and back, as the `tokenizers` / `sentencepiece` libraries do;
// the BOS/EOS ids and chat template of the model beside the file (docs/llm.md, "Text in, text out").
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace vkc::tokenizer {

/// A tokenizer file that cannot be read or a text it cannot encode: one line naming the file.
class TokenizerError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// What the files beside a tokenizer say about the model: generation_config.json, config.json,
/// tokenizer_config.json, onnxruntime-genai's genai_config.json (first found wins, in that order).
struct ModelTokens {
  std::optional<int64_t> bos;
  std::vector<int64_t> eos;
  /// Ids the tokenizer puts around an encoded text when asked to add special tokens (its
  /// post-processor, or tokenizer_config.json's add_bos_token / add_eos_token).
  std::vector<int64_t> prefix, suffix;
  std::string bos_token, eos_token;  // their text, for chat templates
  std::string chat_template;         // tokenizer_config.json's (or chat_template.jinja), if any
};

class Tokenizer {
 public:
  virtual ~Tokenizer() = default;
  /// The ids of `text` without BOS/EOS added; special tokens written in the text are recognised
  /// as the reference library does. Throws TokenizerError on text that is not UTF-8.
  virtual std::vector<int64_t> encode(std::string_view text) const = 0;
  /// The text of `ids` (ids outside the vocabulary are skipped; bytes that do not form UTF-8
  /// become U+FFFD as the reference library writes them).
  virtual std::string decode(std::span<const int64_t> ids) const = 0;
  /// Ids run 0 .. vocab_size() - 1.
  virtual int64_t vocab_size() const = 0;
  virtual std::optional<int64_t> token_id(std::string_view token) const = 0;
  /// A control/special token (EOS, chat markers): not text.
  virtual bool is_special(int64_t id) const = 0;
  /// "hf-bpe" or "sentencepiece".
  virtual std::string kind() const = 0;

  /// encode(text) with the tokenizer's added special tokens (prefix, suffix) around it: what
  /// transformers' tokenizer(text) gives.
  std::vector<int64_t> encode_with_specials(std::string_view text) const;

  const ModelTokens& model_tokens() const { return model_; }
  ModelTokens& model_tokens() { return model_; }
  const std::filesystem::path& path() const { return path_; }

 protected:
  std::filesystem::path path_;
  ModelTokens model_;
};

/// Loads FILE (tokenizer.json or a SentencePiece model) or a folder holding one, and reads the
/// model's token settings from the folder. Throws TokenizerError with one line naming the file.
std::unique_ptr<Tokenizer> load_tokenizer(const std::filesystem::path& path);

/// An HF tokenizer.json held in memory (no files beside it are read); `label` names it in errors.
std::unique_ptr<Tokenizer> parse_tokenizer_json(std::string_view json, const std::string& label = "tokenizer.json");

/// The BOS/EOS ids the model's JSON files in `dir` give (generation_config.json, config.json,
/// genai_config.json; then tokenizer_config.json's tokens when a tokenizer is there too). Throws
/// TokenizerError on a malformed file.
ModelTokens read_model_config(const std::filesystem::path& dir);

/// Streaming decode: push() each generated id and print what it returns; finish() returns the
/// rest. Text is released once it is final (no trailing incomplete UTF-8 character), so the
/// concatenation equals decode(all ids). Each push decodes a window of a few ids, not all of
/// them, so a long generation stays linear.
class TextStream {
 public:
  explicit TextStream(const Tokenizer& tokenizer) : tok_(tokenizer) {}
  std::string push(int64_t id);
  std::string finish();

 private:
  std::string emit(bool final);

  const Tokenizer& tok_;
  std::vector<int64_t> ids_;
  size_t prefix_ = 0;  // the window's first id (kept for context)
  size_t read_ = 0;    // ids before this one are printed
};

}  // namespace vkc::tokenizer
