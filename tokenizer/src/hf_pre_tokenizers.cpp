// tokenizer.json pre-tokenizers: ByteLevel, Split, Metaspace, Digits, Whitespace,
// WhitespaceSplit, Sequence; and the byte-level character map.
#include <fmt/format.h>

#include <array>
#include <memory>

#include "hf_components.h"
#include "regex.h"
#include "utf8.h"
#include "vkc/tokenizer/tokenizer.h"

namespace vkc::tokenizer::hf {
namespace {

// GPT-2's pattern, ByteLevel's own when use_regex is on.
constexpr const char* kGpt2Pattern = R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

struct ByteMap {
  std::array<std::string, 256> chars;
  std::array<int, 0x180> bytes;  // code point -> byte, -1 when none
  ByteMap() {
    bytes.fill(-1);
    int n = 0;
    for (int b = 0; b < 256; ++b) {
      const bool printable = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255);
      const char32_t cp = printable ? static_cast<char32_t>(b) : static_cast<char32_t>(256 + n++);
      utf8::append(chars[b], cp);
      bytes[cp] = b;
    }
  }
};
const ByteMap& byte_map() {
  static const ByteMap map;
  return map;
}

SplitBehavior behavior_of(const std::string& s) {
  if (s == "Removed") return SplitBehavior::Removed;
  if (s == "Isolated") return SplitBehavior::Isolated;
  if (s == "MergedWithPrevious") return SplitBehavior::MergedWithPrevious;
  if (s == "MergedWithNext") return SplitBehavior::MergedWithNext;
  if (s == "Contiguous") return SplitBehavior::Contiguous;
  throw TokenizerError(fmt::format("split behavior '{}' is not known", s));
}

// Each piece replaced by its parts by `re`; a part keeps `first` when it starts its piece.
void split_pieces(std::vector<Piece>& pieces, const Regex& re, SplitBehavior behavior, bool invert) {
  std::vector<Piece> out;
  for (Piece& p : pieces) {
    bool first = p.first;
    for (std::string& part : split_matches(p.text, re.find_all(p.text), behavior, invert)) {
      out.push_back({std::move(part), first});
      first = false;
    }
  }
  pieces = std::move(out);
}

PreTokenizer byte_level(const Json& j) {
  const bool prefix = j.value("add_prefix_space", true), use_regex = j.value("use_regex", true);
  auto re = std::make_shared<Regex>(kGpt2Pattern);
  return [prefix, use_regex, re](std::vector<Piece>& pieces) {
    if (prefix)
      for (Piece& p : pieces)
        if (p.text.empty() || p.text[0] != ' ') p.text.insert(0, " ");
    if (use_regex) split_pieces(pieces, *re, SplitBehavior::Isolated, false);
    for (Piece& p : pieces) {
      std::string mapped;
      for (char c : p.text) mapped += byte_char(static_cast<uint8_t>(c));
      p.text = std::move(mapped);
    }
  };
}

PreTokenizer metaspace(const Json& j) {
  const std::string rep = j.value("replacement", std::string("\xE2\x96\x81"));
  std::string scheme = j.value("prepend_scheme", std::string());
  if (scheme.empty()) scheme = j.value("add_prefix_space", true) ? "always" : "never";
  const bool split = j.value("split", true);
  auto re = std::make_shared<Regex>(rep, true);
  return [rep, scheme, split, re](std::vector<Piece>& pieces) {
    for (Piece& p : pieces) {
      std::string s;
      for (char c : p.text) c == ' ' ? s += rep : s += c;
      const bool starts = s.compare(0, rep.size(), rep) == 0;
      if (!starts && (scheme == "always" || (scheme == "first" && p.first))) s.insert(0, rep);
      p.text = std::move(s);
    }
    if (split) split_pieces(pieces, *re, SplitBehavior::MergedWithNext, false);
  };
}

PreTokenizer regex_split(const std::string& pattern, bool literal, SplitBehavior behavior, bool invert) {
  auto re = std::make_shared<Regex>(pattern, literal);
  return [re, behavior, invert](std::vector<Piece>& pieces) { split_pieces(pieces, *re, behavior, invert); };
}

}  // namespace

const std::string& byte_char(uint8_t b) { return byte_map().chars[b]; }

std::optional<uint8_t> char_byte(char32_t c) {
  if (c >= 0x180 || byte_map().bytes[c] < 0) return std::nullopt;
  return static_cast<uint8_t>(byte_map().bytes[c]);
}

std::pair<std::string, bool> pattern_of(const Json& j) {
  if (j.contains("Regex")) return {j.at("Regex").get<std::string>(), false};
  if (j.contains("String")) return {j.at("String").get<std::string>(), true};
  throw TokenizerError(fmt::format("pattern {} is neither String nor Regex", j.dump()));
}

std::vector<std::string> split_matches(std::string_view text, const std::vector<std::pair<size_t, size_t>>& matches,
                                       SplitBehavior behavior, bool invert) {
  struct Seg {
    size_t b, e;
    bool match;
  };
  std::vector<Seg> segs;
  size_t at = 0;
  for (auto [b, e] : matches) {
    if (b > at) segs.push_back({at, b, invert});
    segs.push_back({b, e, !invert});
    at = e;
  }
  if (at < text.size()) segs.push_back({at, text.size(), invert});
  std::vector<Seg> out;
  bool previous_match = false;
  switch (behavior) {
    case SplitBehavior::Removed:
      for (const Seg& s : segs)
        if (!s.match) out.push_back(s);
      break;
    case SplitBehavior::Isolated:
      out = segs;
      break;
    case SplitBehavior::MergedWithPrevious:
      for (const Seg& s : segs) {
        if (s.match && !previous_match && !out.empty()) out.back().e = s.e;
        else out.push_back(s);
        previous_match = s.match;
      }
      break;
    case SplitBehavior::MergedWithNext:
      for (auto it = segs.rbegin(); it != segs.rend(); ++it) {
        if (it->match && !previous_match && !out.empty()) out.back().b = it->b;
        else out.push_back(*it);
        previous_match = it->match;
      }
      std::reverse(out.begin(), out.end());
      break;
    case SplitBehavior::Contiguous:
      for (const Seg& s : segs) {
        if (s.match && previous_match && !out.empty()) out.back().e = s.e;
        else out.push_back(s);
        previous_match = s.match;
      }
      break;
  }
  std::vector<std::string> parts;
  for (const Seg& s : out)
    if (s.e > s.b) parts.emplace_back(text.substr(s.b, s.e - s.b));
  return parts;
}

PreTokenizer make_pre_tokenizer(const Json& j, int depth) {
  if (depth > kMaxSequenceDepth) throw TokenizerError("pre_tokenizer Sequences nest too deep");
  if (j.is_null()) return [](std::vector<Piece>&) {};
  const std::string type = j.at("type");
  if (type == "ByteLevel") return byte_level(j);
  if (type == "Metaspace") return metaspace(j);
  if (type == "Split") {
    auto [pattern, literal] = pattern_of(j.at("pattern"));
    return regex_split(pattern, literal, behavior_of(j.at("behavior")), j.value("invert", false));
  }
  if (type == "Digits")
    return regex_split(j.value("individual_digits", false) ? R"(\p{N})" : R"(\p{N}+)", false, SplitBehavior::Isolated,
                       false);
  if (type == "Whitespace") return regex_split(R"(\w+|[^\w\s]+)", false, SplitBehavior::Removed, true);
  if (type == "WhitespaceSplit") return regex_split(R"(\s+)", false, SplitBehavior::Removed, false);
  if (type == "Sequence") {
    std::vector<PreTokenizer> seq;
    for (const Json& p : j.at("pretokenizers")) seq.push_back(make_pre_tokenizer(p, depth + 1));
    return [seq](std::vector<Piece>& pieces) {
      for (const PreTokenizer& p : seq) p(pieces);
    };
  }
  throw TokenizerError(fmt::format("pre-tokenizer '{}' is not supported (supported: ByteLevel, Split, Metaspace, "
                                   "Digits, Whitespace, WhitespaceSplit, Sequence)", type));
}

}  // namespace vkc::tokenizer::hf
