// The tokenizer.json BPE model: a word's characters (or, with byte_fallback, the bytes of those
// outside the vocabulary) merged pair by pair, the lowest-ranked merge first (leftmost on ties),
// as the `tokenizers` library does.
#include <fmt/format.h>

#include <limits>

#include "hf_components.h"
#include "utf8.h"
#include "vkc/tokenizer/tokenizer.h"

namespace vkc::tokenizer::hf {
namespace {

uint64_t pair_key(int64_t a, int64_t b) { return (static_cast<uint64_t>(a) << 32) | static_cast<uint32_t>(b); }

}  // namespace

BpeModel::BpeModel(const Json& j) {
  for (const char* unsupported : {"continuing_subword_prefix", "end_of_word_suffix"})
    if (j.contains(unsupported) && !j.at(unsupported).is_null() && j.at(unsupported) != "")
      throw TokenizerError(fmt::format("BPE with {} is not supported", unsupported));
  for (auto& [token, id] : j.at("vocab").items()) vocab_[token] = id.get<int64_t>();
  if (j.contains("unk_token") && j.at("unk_token").is_string()) {
    auto it = vocab_.find(j.at("unk_token").get<std::string>());
    if (it != vocab_.end()) unk_ = it->second;
  }
  fuse_unk_ = j.value("fuse_unk", false);
  byte_fallback_ = j.value("byte_fallback", false);
  ignore_merges_ = j.value("ignore_merges", false);
  for (int b = 0; b < 256; ++b) {
    auto it = vocab_.find(fmt::format("<0x{:02X}>", b));
    byte_ids_[b] = it == vocab_.end() ? -1 : it->second;
  }
  uint32_t rank = 0;
  for (const Json& m : j.at("merges")) {
    std::string a, b;
    if (m.is_string()) {  // "a b"
      const std::string s = m;
      const size_t space = s.find(' ', 1);
      if (space == std::string::npos) throw TokenizerError(fmt::format("merge '{}' is not two tokens", s));
      a = s.substr(0, space), b = s.substr(space + 1);
    } else {  // ["a", "b"]
      a = m.at(0), b = m.at(1);
    }
    auto ia = vocab_.find(a), ib = vocab_.find(b), ic = vocab_.find(a + b);
    if (ia == vocab_.end() || ib == vocab_.end() || ic == vocab_.end())
      throw TokenizerError(fmt::format("merge '{} {}' names a token outside the vocabulary", a, b));
    merges_.emplace(pair_key(ia->second, ib->second), std::make_pair(rank++, ic->second));
  }
}

void BpeModel::tokenize(std::string_view word, std::vector<int64_t>& out) const {
  if (word.empty()) return;
  if (ignore_merges_) {
    if (auto it = vocab_.find(std::string(word)); it != vocab_.end()) {
      out.push_back(it->second);
      return;
    }
  }
  std::vector<int64_t> syms;
  bool last_unk = false;
  for (std::string_view c : utf8::chars(word)) {
    if (auto it = vocab_.find(std::string(c)); it != vocab_.end()) {
      syms.push_back(it->second);
      last_unk = false;
      continue;
    }
    bool bytes_known = byte_fallback_;
    for (char b : c) bytes_known = bytes_known && byte_ids_[static_cast<uint8_t>(b)] >= 0;
    if (bytes_known) {
      for (char b : c) syms.push_back(byte_ids_[static_cast<uint8_t>(b)]);
      last_unk = false;
    } else if (unk_) {  // without an unknown token the library drops the character
      if (!(fuse_unk_ && last_unk)) syms.push_back(*unk_);
      last_unk = true;
    }
  }
  while (syms.size() > 1) {
    uint32_t best = std::numeric_limits<uint32_t>::max();
    size_t at = 0;
    int64_t merged = 0;
    for (size_t i = 0; i + 1 < syms.size(); ++i) {
      auto it = merges_.find(pair_key(syms[i], syms[i + 1]));
      if (it != merges_.end() && it->second.first < best) best = it->second.first, at = i, merged = it->second.second;
    }
    if (best == std::numeric_limits<uint32_t>::max()) break;
    syms[at] = merged;
    syms.erase(syms.begin() + static_cast<std::ptrdiff_t>(at) + 1);
  }
  out.insert(out.end(), syms.begin(), syms.end());
}

}  // namespace vkc::tokenizer::hf
