// load_tokenizer(): the file's kind, and the model's token settings from the files beside it.
#include "vkc/tokenizer/tokenizer.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <fstream>

#include "loaders.h"
#include "utf8.h"

namespace vkc::tokenizer {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

std::optional<Json> read_json(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return std::nullopt;
  try {
    return Json::parse(in);
  } catch (const Json::exception& e) {
    throw TokenizerError(fmt::format("{}: is not valid JSON ({})", file.string(), e.what()));
  }
}

// A token given as "text" or {"content": "text"}.
std::string token_text(const Json& j) {
  if (j.is_string()) return j.get<std::string>();
  if (j.is_object() && j.contains("content") && j["content"].is_string()) return j["content"].get<std::string>();
  return {};
}

std::vector<int64_t> ids_of(const Json& j) {
  std::vector<int64_t> out;
  if (j.is_number_integer()) out.push_back(j.get<int64_t>());
  if (j.is_array())
    for (const Json& v : j)
      if (v.is_number_integer()) out.push_back(v.get<int64_t>());
  return out;
}

// bos/eos ids from generation_config.json, config.json or genai_config.json (its "model").
void read_model_ids(const fs::path& dir, ModelTokens& m) {
  for (const char* name : {"generation_config.json", "config.json", "genai_config.json"}) {
    std::optional<Json> j = read_json(dir / name);
    if (!j || !j->is_object()) continue;
    const Json& o = std::string(name) == "genai_config.json" ? j->value("model", Json::object()) : *j;
    if (!o.is_object()) continue;
    if (o.contains("eos_token_id") && m.eos.empty()) m.eos = ids_of(o["eos_token_id"]);
    if (o.contains("bos_token_id") && !m.bos) {
      auto b = ids_of(o["bos_token_id"]);
      if (!b.empty()) m.bos = b[0];
    }
  }
}

void read_tokenizer_config(const fs::path& dir, const Tokenizer& tok, ModelTokens& m) {
  std::optional<Json> j = read_json(dir / "tokenizer_config.json");
  if (j && j->is_object()) {
    if (auto t = token_text(j->value("bos_token", Json())); !t.empty()) {
      m.bos_token = t;
      if (!m.bos) m.bos = tok.token_id(t);
    }
    if (auto t = token_text(j->value("eos_token", Json())); !t.empty()) {
      m.eos_token = t;
      if (m.eos.empty())
        if (auto id = tok.token_id(t)) m.eos = {*id};
    }
    const Json& tmpl = j->value("chat_template", Json());
    if (tmpl.is_string()) m.chat_template = tmpl.get<std::string>();
    if (tmpl.is_array())
      for (const Json& t : tmpl)
        if (t.value("name", "") == "default") m.chat_template = t.value("template", "");
    if (j->contains("add_bos_token") && (*j)["add_bos_token"].is_boolean()) {
      m.prefix.clear();
      if ((*j)["add_bos_token"].get<bool>() && m.bos) m.prefix = {*m.bos};
    }
    if (j->contains("add_eos_token") && (*j)["add_eos_token"].is_boolean()) {
      m.suffix.clear();
      if ((*j)["add_eos_token"].get<bool>() && !m.eos.empty()) m.suffix = {m.eos[0]};
    }
  }
  if (m.chat_template.empty()) {
    std::ifstream in(dir / "chat_template.jinja", std::ios::binary);
    if (in) m.chat_template.assign(std::istreambuf_iterator<char>(in), {});
  }
}

}  // namespace

std::vector<int64_t> Tokenizer::encode_with_specials(std::string_view text) const {
  std::vector<int64_t> ids = model_.prefix;
  std::vector<int64_t> body = encode(text);
  ids.insert(ids.end(), body.begin(), body.end());
  ids.insert(ids.end(), model_.suffix.begin(), model_.suffix.end());
  return ids;
}

std::unique_ptr<Tokenizer> load_tokenizer(const fs::path& path) {
  fs::path file = path;
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    for (const char* name : {"tokenizer.json", "tokenizer.model"})
      if (fs::exists(path / name)) {
        file = path / name;
        break;
      }
    if (file == path) throw TokenizerError(fmt::format("{}: holds no tokenizer.json or tokenizer.model", path.string()));
  }
  std::ifstream in(file, std::ios::binary);
  if (!in) throw TokenizerError(fmt::format("{}: cannot be read", file.string()));
  char first = 0;
  while (in.get(first) && std::isspace(static_cast<unsigned char>(first))) {
  }
  in.close();
  std::unique_ptr<Tokenizer> tok;
  try {
    tok = first == '{' ? open_hf_tokenizer(file) : open_sentencepiece(file);
    ModelTokens& m = tok->model_tokens();
    const fs::path dir = file.parent_path().empty() ? fs::path(".") : file.parent_path();
    read_model_ids(dir, m);
    read_tokenizer_config(dir, *tok, m);
    for (int64_t id : m.eos)
      if (id < 0 || id >= tok->vocab_size())
        throw TokenizerError(fmt::format("EOS id {} is outside the vocabulary (0..{})", id, tok->vocab_size() - 1));
  } catch (const TokenizerError& e) {
    throw TokenizerError(fmt::format("{}: {}", file.string(), e.what()));
  }
  return tok;
}

std::unique_ptr<Tokenizer> parse_tokenizer_json(std::string_view json, const std::string& label) {
  try {
    return hf_tokenizer_from_json(json, label);
  } catch (const TokenizerError& e) {
    throw TokenizerError(fmt::format("{}: {}", label, e.what()));
  }
}

ModelTokens read_model_config(const fs::path& dir) {
  ModelTokens m;
  read_model_ids(dir, m);
  if (fs::exists(dir / "tokenizer.json") || fs::exists(dir / "tokenizer.model")) {
    try {
      const ModelTokens t = load_tokenizer(dir)->model_tokens();
      if (!m.bos) m.bos = t.bos;
      if (m.eos.empty()) m.eos = t.eos;
    } catch (const TokenizerError&) {  // a tokenizer vkc cannot read gives no ids
    }
  }
  return m;
}

// Streaming decode over a window (the approach of text-generation-inference): the text of
// ids[prefix_..read_) was printed already; the text of ids[prefix_..) minus it is the new part.
// Decoding a window instead of every id so far keeps a long generation linear, and decoding from
// one token back keeps the leading-space rules of SentencePiece-style decoders intact.
namespace {
constexpr size_t kMaxHeld = 16;  // ids held for an incomplete character before printing anyway

bool ends_incomplete(const std::string& text) {
  return text.size() >= 3 && text.compare(text.size() - 3, 3, "\xEF\xBF\xBD") == 0;
}
}  // namespace

std::string TextStream::push(int64_t id) {
  ids_.push_back(id);
  return emit(false);
}

std::string TextStream::finish() { return emit(true); }

std::string TextStream::emit(bool final) {
  const std::span<const int64_t> all(ids_);
  const std::string before = tok_.decode(all.subspan(prefix_, read_ - prefix_));
  const std::string text = tok_.decode(all.subspan(prefix_));
  const bool held_long = ids_.size() - read_ > kMaxHeld;
  if (!final && !held_long && (ends_incomplete(text) || text.size() <= before.size())) return {};
  if (text.compare(0, before.size(), before) != 0 && !final && !held_long) return {};
  std::string out = text.size() > before.size() ? text.substr(before.size()) : std::string();
  prefix_ = read_;
  read_ = ids_.size();
  return out;
}

}  // namespace vkc::tokenizer
