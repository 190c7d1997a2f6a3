// An HF tokenizer.json: added tokens split out of the text first (leftmost-longest, with their
// lstrip/rstrip/single_word rules), each other segment normalized, pre-tokenized and run through
// the BPE model; ids decoded through the decoder chain.
#include <fmt/format.h>
#include <utf8proc.h>

#include <fstream>

#include "hf_components.h"
#include "loaders.h"
#include "utf8.h"

namespace vkc::tokenizer {
namespace {

using hf::Json;

struct AddedToken {
  std::string content;
  int64_t id = 0;
  bool lstrip = false, rstrip = false, single_word = false, special = false;
};

bool word_char(char32_t c) {
  const auto cat = utf8proc_category(static_cast<utf8proc_int32_t>(c));
  return c == '_' || (cat >= UTF8PROC_CATEGORY_LU && cat <= UTF8PROC_CATEGORY_LO) ||
         (cat >= UTF8PROC_CATEGORY_ND && cat <= UTF8PROC_CATEGORY_NO);
}

bool space_at(std::string_view s, size_t i) {
  return i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r');
}

class HfTokenizer final : public Tokenizer {
 public:
  HfTokenizer(const std::filesystem::path& file, const Json& j)
      : model_obj_(j.at("model")),
        normalizer_(hf::make_normalizer(j.value("normalizer", Json()))),
        pre_(hf::make_pre_tokenizer(j.value("pre_tokenizer", Json()))),
        decoder_(hf::make_decoder(j.value("decoder", Json()))) {
    path_ = file;
    for (const auto& [token, id] : model_obj_.vocab()) set_token(id, token);
    for (const Json& a : j.value("added_tokens", Json::array())) {
      AddedToken t{a.at("content"), hf::integer(a.at("id"), "an added token's id"), a.value("lstrip", false), a.value("rstrip", false),
                   a.value("single_word", false), a.value("special", false)};
      set_token(t.id, t.content);
      if (t.special) specials_.push_back(t.id);
      if (!t.content.empty()) added_.push_back(std::move(t));
    }
    read_post_processor(j.value("post_processor", Json()));
  }

  std::vector<int64_t> encode(std::string_view text) const override {
    if (!utf8::valid(text)) throw TokenizerError("the text is not valid UTF-8");
    std::vector<int64_t> ids;
    size_t at = 0;
    while (at <= text.size()) {
      auto [b, e, token] = next_added(text, at);
      encode_segment(text.substr(at, b - at), at == 0, ids);
      if (!token) break;
      ids.push_back(token->id);
      at = e;
    }
    return ids;
  }

  std::string decode(std::span<const int64_t> ids) const override {
    std::vector<std::string> tokens;
    for (int64_t id : ids)
      if (id >= 0 && static_cast<size_t>(id) < id_token_.size() && has_[static_cast<size_t>(id)])
        tokens.push_back(id_token_[static_cast<size_t>(id)]);
    std::string out;
    for (const std::string& t : decoder_(std::move(tokens))) out += t;
    return out;
  }

  int64_t vocab_size() const override { return static_cast<int64_t>(id_token_.size()); }
  std::optional<int64_t> token_id(std::string_view token) const override {
    for (const AddedToken& t : added_)
      if (t.content == token) return t.id;
    auto it = model_obj_.vocab().find(std::string(token));
    if (it == model_obj_.vocab().end()) return std::nullopt;
    return it->second;
  }
  bool is_special(int64_t id) const override { return std::find(specials_.begin(), specials_.end(), id) != specials_.end(); }
  std::string kind() const override { return "hf-bpe"; }

 private:
  void set_token(int64_t id, const std::string& token) {
    if (id < 0 || id >= (int64_t{1} << 24))
      throw TokenizerError(fmt::format("token '{}' has id {}, outside 0..16777215", token, id));
    if (static_cast<size_t>(id) >= id_token_.size()) id_token_.resize(static_cast<size_t>(id) + 1), has_.resize(id_token_.size());
    id_token_[static_cast<size_t>(id)] = token;
    has_[static_cast<size_t>(id)] = true;
  }

  // The first added token at or after `at` (the longest where several start at one place), with
  // the whitespace its lstrip/rstrip take: [begin, end) and the token, or (size, size, null).
  std::tuple<size_t, size_t, const AddedToken*> next_added(std::string_view text, size_t at) const {
    for (size_t i = at; i < text.size(); ++i) {
      const AddedToken* best = nullptr;
      for (const AddedToken& t : added_) {
        if (text.compare(i, t.content.size(), t.content) != 0) continue;
        if (best && best->content.size() >= t.content.size()) continue;
        if (t.single_word) {
          char32_t cp;
          bool ok;
          if (i > 0) {
            size_t p = i - 1;
            while (p > 0 && (static_cast<uint8_t>(text[p]) & 0xC0) == 0x80) --p;
            utf8::scan(text, p, cp, ok);
            if (word_char(cp)) continue;
          }
          const size_t e = i + t.content.size();
          if (e < text.size() && (utf8::scan(text, e, cp, ok), word_char(cp))) continue;
        }
        best = &t;
      }
      if (!best) continue;
      size_t b = i, e = i + best->content.size();
      if (best->lstrip)
        while (b > at && space_at(text, b - 1)) --b;
      if (best->rstrip)
        while (space_at(text, e)) ++e;
      return {b, e, best};
    }
    return {text.size(), text.size(), nullptr};
  }

  void encode_segment(std::string_view segment, bool first, std::vector<int64_t>& ids) const {
    if (segment.empty()) return;
    std::vector<hf::Piece> pieces{{normalizer_(std::string(segment)), first}};
    pre_(pieces);
    for (const hf::Piece& p : pieces) model_obj_.tokenize(p.text, ids);
  }

  // TemplateProcessing (Llama-2/3: <s> $A), BertProcessing/RobertaProcessing, or a Sequence
  // holding one: the special tokens put around a single text.
  void read_post_processor(const Json& p, int depth = 0) {
    if (p.is_null()) return;
    if (depth > hf::kMaxSequenceDepth) throw TokenizerError("post_processor Sequences nest too deep");
    const std::string type = p.value("type", "");
    if (type == "Sequence") {
      for (const Json& q : p.value("processors", Json::array())) read_post_processor(q, depth + 1);
    } else if (type == "TemplateProcessing") {
      bool after = false;
      for (const Json& item : p.value("single", Json::array())) {
        if (item.contains("Sequence")) {
          after = true;
        } else if (item.contains("SpecialToken")) {
          const std::string name = item["SpecialToken"].at("id");
          for (const Json& id : p.at("special_tokens").at(name).at("ids"))
            (after ? model_.suffix : model_.prefix).push_back(hf::integer(id, "a post-processor id"));
        }
      }
    } else if (type == "BertProcessing" || type == "RobertaProcessing") {
      model_.prefix.push_back(hf::integer(p.at("cls").at(1), "the cls id"));
      model_.suffix.push_back(hf::integer(p.at("sep").at(1), "the sep id"));
    }
  }

  hf::BpeModel model_obj_;
  hf::Normalizer normalizer_;
  hf::PreTokenizer pre_;
  hf::Decoder decoder_;
  std::vector<AddedToken> added_;
  std::vector<std::string> id_token_;
  std::vector<bool> has_;
  std::vector<int64_t> specials_;
};

}  // namespace

std::unique_ptr<Tokenizer> open_hf_tokenizer(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw TokenizerError("cannot be read");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return hf_tokenizer_from_json(text, file);
}

std::unique_ptr<Tokenizer> hf_tokenizer_from_json(std::string_view text, const std::filesystem::path& file) {
  Json j;
  try {
    j = Json::parse(text);
  } catch (const Json::exception& e) {
    throw TokenizerError(fmt::format("is not valid JSON ({})", e.what()));
  }
  if (!j.is_object() || !j.contains("model") || !j["model"].is_object())
    throw TokenizerError("is not a tokenizer.json (no \"model\")");
  const Json& type_field = j["model"].value("type", Json(j["model"].contains("merges") ? "BPE" : ""));
  const std::string type = type_field.is_string() ? type_field.get<std::string>() : "";
  if (type != "BPE")
    throw TokenizerError(fmt::format("model type '{}' is not supported (BPE tokenizer.json files are; for "
                                     "SentencePiece models give the tokenizer.model file)", type));
  try {
    return std::make_unique<HfTokenizer>(file, j);
  } catch (const Json::exception& e) {
    throw TokenizerError(fmt::format("malformed tokenizer.json ({})", e.what()));
  }
}

}  // namespace vkc::tokenizer
