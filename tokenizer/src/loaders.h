// The tokenizer kinds load_tokenizer() chooses between (src/tokenizer.cpp).
#pragma once

#include <filesystem>
#include <memory>

#include "vkc/tokenizer/tokenizer.h"

namespace vkc::tokenizer {

/// An HF tokenizer.json (BPE model). `prefix`/`suffix` of the model tokens are set from its
/// post-processor.
std::unique_ptr<Tokenizer> open_hf_tokenizer(const std::filesystem::path& file);
/// The same from the file's text.
std::unique_ptr<Tokenizer> hf_tokenizer_from_json(std::string_view json, const std::filesystem::path& file);
/// A SentencePiece model file; bos/eos from the model.
std::unique_ptr<Tokenizer> open_sentencepiece(const std::filesystem::path& file);

}  // namespace vkc::tokenizer
