// The parts of an HF tokenizer.json pipeline (normalizer, pre-tokenizer, model, decoder), each
// built from its JSON object as the `tokenizers` library defines it. A type vkc does not know is
// one TokenizerError naming it.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace vkc::tokenizer::hf {

using Json = nlohmann::json;

/// A non-negative integer field (an id, a count) of at most 2^31 - 1; anything else (a float, a
/// string, a huge number) is one TokenizerError naming `what`.
int64_t integer(const Json& j, const char* what);

/// How deep Sequences may nest (a file nesting deeper is refused, not a stack overflow).
constexpr int kMaxSequenceDepth = 16;

/// Text -> normalized text (null: identity).
using Normalizer = std::function<std::string(std::string)>;
Normalizer make_normalizer(const Json& j, int depth = 0);

/// A piece of the text on its way to the model; `first`: it starts the input (Metaspace's
/// prepend_scheme "first").
struct Piece {
  std::string text;
  bool first = false;
};
using PreTokenizer = std::function<void(std::vector<Piece>&)>;
PreTokenizer make_pre_tokenizer(const Json& j, int depth = 0);

/// Tokens -> text pieces (null: tokens joined with spaces, as the library does without one).
using Decoder = std::function<std::vector<std::string>(std::vector<std::string>)>;
Decoder make_decoder(const Json& j, int depth = 0);

/// GPT-2's byte <-> printable character map (ByteLevel).
const std::string& byte_char(uint8_t b);
std::optional<uint8_t> char_byte(char32_t c);

/// `text` split by a pattern's matches the way Split's `behavior` says.
enum class SplitBehavior { Removed, Isolated, MergedWithPrevious, MergedWithNext, Contiguous };
std::vector<std::string> split_matches(std::string_view text, const std::vector<std::pair<size_t, size_t>>& matches,
                                       SplitBehavior behavior, bool invert);

/// A `{"String": s}` or `{"Regex": r}` pattern object; returns (pattern, literal).
std::pair<std::string, bool> pattern_of(const Json& j);

/// The BPE model: vocabulary, merges, byte fallback, unknown token.
class BpeModel {
 public:
  explicit BpeModel(const Json& j);
  void tokenize(std::string_view word, std::vector<int64_t>& out) const;
  const std::unordered_map<std::string, int64_t>& vocab() const { return vocab_; }

 private:
  std::unordered_map<std::string, int64_t> vocab_;
  std::unordered_map<uint64_t, std::pair<uint32_t, int64_t>> merges_;  // (left, right) -> (rank, merged)
  std::optional<int64_t> unk_;
  bool fuse_unk_ = false, byte_fallback_ = false, ignore_merges_ = false;
  int64_t byte_ids_[256];
};

}  // namespace vkc::tokenizer::hf
