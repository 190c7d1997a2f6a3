// Session::generate_text: text in, text out (run.h).
#include <fmt/format.h>

#include <algorithm>

#include "vkc/api/run.h"
#include "vkc/runtime/generate.h"
#include "vkc/tokenizer/chat_template.h"

namespace vkc::detail {

// Throws std::runtime_error (one line) on what cannot be generated.
TextResult generate_text(runtime::Executor& exec, const tokenizer::Tokenizer& tok, const std::string& prompt_text,
                         const TextGenerateOptions& o) {
  if (std::string why = runtime::generate_misfit(exec); !why.empty()) throw std::runtime_error(why);
  const int64_t vocab = exec.outputs().at(0).shape.back();
  if (tok.vocab_size() > vocab)
    throw std::runtime_error(fmt::format("tokenizer {}: it has {} tokens, the program's logits {}: not this model's "
                                         "tokenizer",
                                         tok.path().string(), tok.vocab_size(), vocab));
  std::string text = prompt_text;
  const tokenizer::ModelTokens& m = tok.model_tokens();
  if (o.chat) {
    if (m.chat_template.empty())
      throw std::runtime_error(fmt::format("tokenizer {} has no chat template (tokenizer_config.json's chat_template)",
                                           tok.path().string()));
    text = tokenizer::apply_chat_template(m.chat_template, {{"user", text}}, true, m.bos_token, m.eos_token);
  }
  TextResult r;
  r.prompt_ids = o.add_special_tokens && !o.chat ? tok.encode_with_specials(text) : tok.encode(text);
  if (r.prompt_ids.empty()) throw std::runtime_error("the prompt encodes to no tokens");
  for (int64_t id : o.eos)
    if (id < 0 || id >= vocab) throw std::runtime_error(fmt::format("EOS id {}: the program's vocabulary has {} ids", id, vocab));

  runtime::GenerateOptions g;
  g.sampling = o.sampling;
  g.vocab = tok.vocab_size();
  g.stop_ids = !o.eos.empty() ? o.eos : exec.metadata_ints("get_eos_ids");
  if (g.stop_ids.empty()) g.stop_ids = m.eos;
  const int64_t cache = exec.metadata_int("get_max_context_len").value_or(0);
  const int64_t prompt = static_cast<int64_t>(r.prompt_ids.size());
  if (cache > 0 && prompt > cache)
    throw std::runtime_error(fmt::format("the prompt has {} tokens; the program's cache holds {} positions", prompt, cache));
  const int64_t room = cache - prompt + 1;  // the last new token needs no position
  if (o.max_new_tokens > 0) {
    g.max_new_tokens = o.max_new_tokens;
    if (cache > 0 && static_cast<int64_t>(o.max_new_tokens) > room) {
      r.notes.push_back(fmt::format("the cache holds {} positions: {} new tokens at most after {} prompt tokens", cache,
                                    room, prompt));
      g.max_new_tokens = static_cast<size_t>(room);
    }
  } else {
    if (cache == 0)
      throw std::runtime_error("the program does not say its cache length (no get_max_context_len): give a maximum "
                               "number of new tokens");
    g.max_new_tokens = static_cast<size_t>(room);
  }
  tokenizer::TextStream stream(tok);
  if (o.on_text)
    g.on_token = [&](int64_t id) {
      if (std::find(g.stop_ids.begin(), g.stop_ids.end(), id) != g.stop_ids.end()) return;
      if (const std::string piece = stream.push(id); !piece.empty()) o.on_text(piece);
    };
  const runtime::GenerateResult out = runtime::generate(exec, r.prompt_ids, g);
  if (o.on_text)
    if (const std::string rest = stream.finish(); !rest.empty()) o.on_text(rest);
  r.tokens = out.tokens;
  r.stopped_at_eos = out.stopped;
  std::vector<int64_t> body = out.tokens;
  if (out.stopped) body.pop_back();
  r.text = tok.decode(body);
  r.prefill_seconds = out.prefill_seconds;
  r.decode_seconds = out.decode_seconds;
  r.prefill_tokens_per_s = out.prefill_tokens_per_s();
  r.decode_tokens_per_s = out.decode_tokens_per_s();
  r.device_loop = out.device_loop;
  r.ok = true;
  return r;
}

}  // namespace vkc::detail
