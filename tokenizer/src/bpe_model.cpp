// The tokenizer.json BPE model: a word's characters (or, with byte_fallback, the bytes of those
// outside the vocabulary) merged pair by pair, the lowest-ranked merge first (leftmost on ties),
// as the `tokenizers` library does.
#include <fmt/format.h>

#include <functional>
#include <climits>
#include <limits>
#include <queue>

#include "hf_components.h"
#include "utf8.h"
#include "vkc/tokenizer/tokenizer.h"

namespace vkc::tokenizer::hf {
namespace {

uint64_t pair_key(int64_t a, int64_t b) { return (static_cast<uint64_t>(a) << 32) | static_cast<uint32_t>(b); }

}  // namespace

int64_t integer(const Json& j, const char* what) {
  if (!j.is_number_integer() || (j.is_number_unsigned() ? j.get<uint64_t>() > INT32_MAX : j.get<int64_t>() < 0 || j.get<int64_t>() > INT32_MAX))
    throw TokenizerError(fmt::format("{} {} is not an integer in 0..{}", what, j.dump(), INT32_MAX));
  return j.get<int64_t>();
}

BpeModel::BpeModel(const Json& j) {
  for (const char* unsupported : {"continuing_subword_prefix", "end_of_word_suffix"})
    if (j.contains(unsupported) && !j.at(unsupported).is_null() && j.at(unsupported) != "")
      throw TokenizerError(fmt::format("BPE with {} is not supported", unsupported));
  for (auto& [token, id] : j.at("vocab").items()) vocab_[token] = integer(id, "the id of a vocabulary token");
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
  // Merges by a queue of candidate pairs, lowest rank first and leftmost among equals (the
  // symbols as a linked list; a pair whose symbols changed since it was queued is skipped):
  // O(n log n), where rescanning the word for each merge would take O(n^2) on a long word.
  const int n = static_cast<int>(syms.size());
  std::vector<int> next(static_cast<size_t>(n)), prev(static_cast<size_t>(n));
  std::vector<bool> alive(static_cast<size_t>(n), true);
  for (int i = 0; i < n; ++i) next[static_cast<size_t>(i)] = i + 1 < n ? i + 1 : -1, prev[static_cast<size_t>(i)] = i - 1;
  using Candidate = std::pair<uint32_t, int>;  // (rank, left symbol)
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>> queue;
  auto rank_of = [&](int i) -> std::optional<std::pair<uint32_t, int64_t>> {
    const int j = next[static_cast<size_t>(i)];
    if (j < 0) return std::nullopt;
    auto it = merges_.find(pair_key(syms[static_cast<size_t>(i)], syms[static_cast<size_t>(j)]));
    if (it == merges_.end()) return std::nullopt;
    return it->second;
  };
  auto offer = [&](int i) {
    if (i < 0) return;
    if (auto r = rank_of(i)) queue.emplace(r->first, i);
  };
  for (int i = 0; i + 1 < n; ++i) offer(i);
  while (!queue.empty()) {
    const auto [rank, i] = queue.top();
    queue.pop();
    if (!alive[static_cast<size_t>(i)]) continue;
    const auto r = rank_of(i);
    if (!r || r->first != rank) continue;  // stale
    const int j = next[static_cast<size_t>(i)];
    syms[static_cast<size_t>(i)] = r->second;
    alive[static_cast<size_t>(j)] = false;
    next[static_cast<size_t>(i)] = next[static_cast<size_t>(j)];
    if (next[static_cast<size_t>(i)] >= 0) prev[static_cast<size_t>(next[static_cast<size_t>(i)])] = i;
    offer(prev[static_cast<size_t>(i)]);
    offer(i);
  }
  std::vector<int64_t> merged;
  for (int i = 0; i >= 0 && i < n; i = next[static_cast<size_t>(i)]) merged.push_back(syms[static_cast<size_t>(i)]);
  syms = std::move(merged);
  out.insert(out.end(), syms.begin(), syms.end());
}

}  // namespace vkc::tokenizer::hf
