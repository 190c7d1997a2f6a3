// tokenizer.json normalizers: NFC/NFD/NFKC/NFKD (utf8proc), Lowercase, Strip, Replace, Prepend,
// Sequence.
#include <fmt/format.h>
#include <utf8proc.h>

#include <cstdlib>

#include "hf_components.h"
#include "regex.h"
#include "utf8.h"
#include "vkc/tokenizer/tokenizer.h"

namespace vkc::tokenizer::hf {
namespace {

std::string unicode_form(const std::string& s, int options) {
  utf8proc_uint8_t* out = nullptr;
  const utf8proc_ssize_t n = utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(s.data()),
                                          static_cast<utf8proc_ssize_t>(s.size()), &out,
                                          static_cast<utf8proc_option_t>(UTF8PROC_STABLE | options));
  if (n < 0) throw TokenizerError(fmt::format("text is not valid UTF-8 ({})", utf8proc_errmsg(n)));
  std::string r(reinterpret_cast<char*>(out), static_cast<size_t>(n));
  std::free(out);
  return r;
}

bool is_space(char32_t c) { return utf8proc_category(static_cast<utf8proc_int32_t>(c)) == UTF8PROC_CATEGORY_ZS || (c >= 9 && c <= 13) || c == 0x85 || c == 0x2028 || c == 0x2029; }

Normalizer replace(const Json& j) {
  auto [pattern, literal] = pattern_of(j.at("pattern"));
  auto re = std::make_shared<Regex>(pattern, literal);
  std::string content = j.at("content");
  return [re, content](std::string s) {
    std::string out;
    size_t at = 0;
    for (auto [b, e] : re->find_all(s)) {
      out.append(s, at, b - at);
      out += content;
      at = e;
    }
    out.append(s, at);
    return out;
  };
}

}  // namespace

Normalizer make_normalizer(const Json& j, int depth) {
  if (depth > kMaxSequenceDepth) throw TokenizerError("normalizer Sequences nest too deep");
  if (j.is_null()) return [](std::string s) { return s; };
  const std::string type = j.at("type");
  if (type == "NFC") return [](std::string s) { return unicode_form(s, UTF8PROC_COMPOSE); };
  if (type == "NFD") return [](std::string s) { return unicode_form(s, UTF8PROC_DECOMPOSE); };
  if (type == "NFKC") return [](std::string s) { return unicode_form(s, UTF8PROC_COMPOSE | UTF8PROC_COMPAT); };
  if (type == "NFKD") return [](std::string s) { return unicode_form(s, UTF8PROC_DECOMPOSE | UTF8PROC_COMPAT); };
  if (type == "Lowercase")
    return [](std::string s) {
      std::u32string cps = utf8::decode(s);
      for (char32_t& c : cps) c = static_cast<char32_t>(utf8proc_tolower(static_cast<utf8proc_int32_t>(c)));
      return utf8::encode(cps);
    };
  if (type == "Strip") {
    const bool left = j.value("strip_left", true), right = j.value("strip_right", true);
    return [left, right](std::string s) {
      std::u32string cps = utf8::decode(s);
      size_t b = 0, e = cps.size();
      while (left && b < e && is_space(cps[b])) ++b;
      while (right && e > b && is_space(cps[e - 1])) --e;
      return utf8::encode(std::u32string_view(cps).substr(b, e - b));
    };
  }
  if (type == "Replace") return replace(j);
  if (type == "Prepend") {
    std::string prepend = j.at("prepend");
    return [prepend](std::string s) { return s.empty() ? s : prepend + s; };
  }
  if (type == "Sequence") {
    std::vector<Normalizer> seq;
    for (const Json& n : j.at("normalizers")) seq.push_back(make_normalizer(n, depth + 1));
    return [seq](std::string s) {
      for (const Normalizer& n : seq) s = n(std::move(s));
      return s;
    };
  }
  throw TokenizerError(fmt::format("normalizer '{}' is not supported (supported: NFC, NFD, NFKC, NFKD, Lowercase, "
                                   "Strip, Replace, Prepend, Sequence)", type));
}

}  // namespace vkc::tokenizer::hf
