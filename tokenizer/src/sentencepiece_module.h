// The SentencePiece library behind a module of its own (libvkc_sentencepiece.so), opened with
// dlopen(RTLD_LOCAL | RTLD_DEEPBIND) the first time a .model file is read. Debian's
// libsentencepiece carries its own copy of protobuf-lite and exports its symbols: linked into a
// program that also links libprotobuf (vkc does, for ONNX), the two copies' symbols interpose and
// the program crashes while loading. Opened locally and deep-bound, each copy keeps its own.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace vkc::tokenizer {

class SentencePieceModule {
 public:
  virtual ~SentencePieceModule() = default;
  virtual bool encode(std::string_view text, std::vector<int>& ids, std::string& error) const = 0;
  virtual bool decode(const std::vector<int>& ids, std::string& text, std::string& error) const = 0;
  virtual int size() const = 0;
  virtual int piece_to_id(std::string_view piece) const = 0;
  virtual std::string id_to_piece(int id) const = 0;
  virtual bool is_control(int id) const = 0;
  virtual bool is_unknown(int id) const = 0;
  virtual int bos_id() const = 0;
  virtual int eos_id() const = 0;
  virtual int unk_id() const = 0;
};

/// The module's one entry point (dlsym name "vkc_sentencepiece_open"): the model at `path`, or
/// null with `error` set.
using SentencePieceOpenFn = SentencePieceModule* (*)(const char* path, std::string* error);

}  // namespace vkc::tokenizer
