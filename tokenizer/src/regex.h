// The patterns tokenizer.json files split and replace with (Oniguruma syntax in the `tokenizers`
// library: Unicode properties, lookahead, scoped flags), run by PCRE2 in UTF + UCP mode.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace vkc::tokenizer {

class Regex {
 public:
  /// `literal`: the pattern is a plain string. Throws TokenizerError naming the pattern.
  explicit Regex(const std::string& pattern, bool literal = false);
  ~Regex();
  Regex(Regex&&) noexcept;
  Regex& operator=(Regex&&) noexcept;
  /// Each non-overlapping match's [begin, end) in `text` (valid UTF-8), left to right; an empty
  /// match moves on by one character.
  std::vector<std::pair<size_t, size_t>> find_all(std::string_view text) const;

 private:
  struct Code;
  std::unique_ptr<Code> code_;
};

}  // namespace vkc::tokenizer
