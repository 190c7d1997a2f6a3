// libvkc_sentencepiece.so: SentencePieceModule over Debian's libsentencepiece (see
// sentencepiece_module.h for why it is a module of its own).
#include <sentencepiece_processor.h>

#include "sentencepiece_module.h"

namespace {

class Processor final : public vkc::tokenizer::SentencePieceModule {
 public:
  bool load(const char* path, std::string& error) {
    const auto status = sp_.Load(path);
    if (!status.ok()) error = status.ToString();
    return status.ok();
  }
  bool encode(std::string_view text, std::vector<int>& ids, std::string& error) const override {
    const auto status = sp_.Encode(text, &ids);
    if (!status.ok()) error = status.ToString();
    return status.ok();
  }
  bool decode(const std::vector<int>& ids, std::string& text, std::string& error) const override {
    const auto status = sp_.Decode(ids, &text);
    if (!status.ok()) error = status.ToString();
    return status.ok();
  }
  int size() const override { return sp_.GetPieceSize(); }
  int piece_to_id(std::string_view piece) const override { return sp_.PieceToId(piece); }
  std::string id_to_piece(int id) const override { return sp_.IdToPiece(id); }
  bool is_control(int id) const override { return sp_.IsControl(id); }
  bool is_unknown(int id) const override { return sp_.IsUnknown(id); }
  int bos_id() const override { return sp_.bos_id(); }
  int eos_id() const override { return sp_.eos_id(); }
  int unk_id() const override { return sp_.unk_id(); }

 private:
  sentencepiece::SentencePieceProcessor sp_;
};

}  // namespace

extern "C" __attribute__((visibility("default"))) vkc::tokenizer::SentencePieceModule* vkc_sentencepiece_open(
    const char* path, std::string* error) {
  auto p = new Processor();
  if (!p->load(path, *error)) {
    delete p;
    return nullptr;
  }
  return p;
}
