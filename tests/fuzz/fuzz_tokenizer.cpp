// fuzz_tokenizer: the text a user's files and prompts bring to the tokenizer layer. The first byte
// picks: even, an HF tokenizer.json (the bytes up to the first NUL) that then encodes and decodes
// the rest; odd, a chat template (the bytes after the first) rendered with two messages.
#include <cstdint>
#include <string>
#include <string_view>

#include "vkc/tokenizer/chat_template.h"
#include "vkc/tokenizer/tokenizer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view all(reinterpret_cast<const char*>(data) + 1, size - 1);
  try {
    if (data[0] % 2 == 0) {
      const size_t nul = all.find('\0');
      auto tok = vkc::tokenizer::parse_tokenizer_json(all.substr(0, nul));
      const std::string_view text = nul == std::string_view::npos ? std::string_view() : all.substr(nul + 1);
      const auto ids = tok->encode(text);
      (void)tok->decode(ids);
      vkc::tokenizer::TextStream stream(*tok);
      for (int64_t id : ids) (void)stream.push(id);
      (void)stream.finish();
    } else {
      (void)vkc::tokenizer::apply_chat_template(std::string(all), {{"system", "s"}, {"user", "hi"}}, true, "<s>", "</s>");
    }
  } catch (const vkc::tokenizer::TokenizerError&) {
  }
  return 0;
}
