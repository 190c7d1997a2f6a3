// A SentencePiece model file, through Debian's libsentencepiece in its own module
// (sentencepiece_module.h).
#include <dlfcn.h>
#include <fmt/format.h>

#include <cstdlib>
#include <mutex>

#include "loaders.h"
#include "sentencepiece_module.h"

namespace vkc::tokenizer {
namespace {

// VKC_SENTENCEPIECE_MODULE, else the build tree's module, else the installed one.
SentencePieceOpenFn open_fn() {
  static std::once_flag once;
  static SentencePieceOpenFn fn = nullptr;
  static std::string why;
  std::call_once(once, [] {
    std::vector<std::string> paths;
    if (const char* env = std::getenv("VKC_SENTENCEPIECE_MODULE")) paths.emplace_back(env);
    paths.emplace_back(VKC_SENTENCEPIECE_MODULE_BUILD);
    paths.emplace_back(VKC_SENTENCEPIECE_MODULE_INSTALL);
    for (const std::string& p : paths) {
      void* h = dlopen(p.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
      if (!h) {
        why += fmt::format("{}{}", why.empty() ? "" : "; ", dlerror());
        continue;
      }
      fn = reinterpret_cast<SentencePieceOpenFn>(dlsym(h, "vkc_sentencepiece_open"));
      if (fn) return;
    }
  });
  if (!fn) throw TokenizerError(fmt::format("SentencePiece support is not installed ({})", why));
  return fn;
}

class SentencePieceTokenizer final : public Tokenizer {
 public:
  explicit SentencePieceTokenizer(const std::filesystem::path& file) {
    path_ = file;
    std::string error;
    sp_.reset(open_fn()(file.c_str(), &error));
    if (!sp_) throw TokenizerError(fmt::format("is not a SentencePiece model ({})", error));
    if (sp_->bos_id() >= 0) model_.bos = sp_->bos_id(), model_.bos_token = sp_->id_to_piece(sp_->bos_id());
    if (sp_->eos_id() >= 0) model_.eos = {sp_->eos_id()}, model_.eos_token = sp_->id_to_piece(sp_->eos_id());
  }

  std::vector<int64_t> encode(std::string_view text) const override {
    std::vector<int> ids;
    std::string error;
    if (!sp_->encode(text, ids, error)) throw TokenizerError(error);
    return {ids.begin(), ids.end()};
  }
  std::string decode(std::span<const int64_t> ids) const override {
    std::vector<int> in;
    for (int64_t id : ids)
      if (id >= 0 && id < vocab_size()) in.push_back(static_cast<int>(id));
    std::string out, error;
    if (!sp_->decode(in, out, error)) throw TokenizerError(error);
    return out;
  }
  int64_t vocab_size() const override { return sp_->size(); }
  std::optional<int64_t> token_id(std::string_view token) const override {
    const int id = sp_->piece_to_id(token);
    if (id == sp_->unk_id() && token != sp_->id_to_piece(id)) return std::nullopt;
    return id;
  }
  bool is_special(int64_t id) const override {
    const int i = static_cast<int>(id);
    return id >= 0 && id < vocab_size() && (sp_->is_control(i) || sp_->is_unknown(i));
  }
  std::string kind() const override { return "sentencepiece"; }

 private:
  std::unique_ptr<SentencePieceModule> sp_;
};

}  // namespace

std::unique_ptr<Tokenizer> open_sentencepiece(const std::filesystem::path& file) {
  return std::make_unique<SentencePieceTokenizer>(file);
}

}  // namespace vkc::tokenizer
