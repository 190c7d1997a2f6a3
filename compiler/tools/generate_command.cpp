// `vkc run --generate N --prompt-ids ...` (ids in, ids out) and `vkc run --tokenizer FILE
// --prompt TEXT` (text in, text streamed out): generation with a KV-cache program (docs/llm.md).
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "run_command.h"
#include "vkc/compiler/option_parsing.h"
#include "vkc/runtime/executor.h"
#include "vkc/runtime/generate.h"
#include "vkc/tokenizer/chat_template.h"
#include "vkc/tokenizer/tokenizer.h"

namespace vkc::tools {
namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

std::vector<int64_t> parse_ids(const std::string& text) {
  std::vector<int64_t> ids;
  for (size_t start = 0; start <= text.size();) {
    const size_t end = std::min(text.find(',', start), text.size());
    const std::string item = text.substr(start, end - start);
    if (item.empty() || !std::all_of(item.begin(), item.end(), ::isdigit) || item.size() > 12)
      throw compiler::OptionError(fmt::format("--prompt-ids '{}': '{}' is not a token id", text, item));
    ids.push_back(std::stoll(item));
    start = end + 1;
  }
  return ids;
}

struct Loaded {
  std::unique_ptr<runtime::Backend> backend;
  runtime::Executor exec;
  double load_ms = 0;
};

Loaded load(const RunArgs& a, const char* what) {
  if (!a.inputs.empty() || a.random_seed || !a.expect_dir.empty() || !a.save_dir.empty())
    throw compiler::OptionError(fmt::format("{} takes no --input, --random, --expect or --save", what));
  auto t0 = Clock::now();
  std::unique_ptr<runtime::Backend> backend = runtime::make_backend(a.backend);
  runtime::Executor exec = runtime::Executor::load(a.pte, *backend);
  Loaded l{std::move(backend), std::move(exec), ms_since(t0)};
  if (std::string why = runtime::generate_misfit(l.exec); !why.empty())
    throw compiler::OptionError(fmt::format("{}: {}", what, why));
  return l;
}

runtime::SamplingOptions sampling(const RunArgs& a) {
  return {a.temperature, a.top_p, a.top_k, a.seed};
}

void print_speeds(size_t prompt, const runtime::GenerateResult& r) {
  fmt::print(stderr, "prefill: {} tokens in {:.3f} s ({:.1f} tokens/s); decode: {} tokens in {:.3f} s ({:.1f} tokens/s)\n",
             prompt, r.prefill_seconds, r.prefill_tokens_per_s(), r.tokens.empty() ? 0 : r.tokens.size() - 1,
             r.decode_seconds, r.decode_tokens_per_s());
}

nlohmann::ordered_json stats_json(const RunArgs& a, const Loaded& l, const runtime::GenerateResult& r) {
  return {{"file", a.pte},
          {"backend", a.backend},
          {"load_ms", l.load_ms},
          {"prefill_s", r.prefill_seconds},
          {"decode_s", r.decode_seconds},
          {"prefill_tokens_per_s", r.prefill_tokens_per_s()},
          {"decode_tokens_per_s", r.decode_tokens_per_s()}};
}

}  // namespace

int run_generate(const RunArgs& a) {
  if (a.prompt_ids.empty()) throw compiler::OptionError("--generate needs --prompt-ids 1,2,3");
  const std::vector<int64_t> prompt = parse_ids(a.prompt_ids);
  Loaded l = load(a, "--generate");
  runtime::GenerateOptions options;
  options.max_new_tokens = static_cast<size_t>(a.generate);
  options.sampling = sampling(a);
  options.stop_ids = a.eos;
  const runtime::GenerateResult r = runtime::generate(l.exec, prompt, options);
  if (a.json) {
    nlohmann::ordered_json j = stats_json(a, l, r);
    j["prompt"] = prompt;
    j["tokens"] = r.tokens;
    fmt::print("{}\n", j.dump(2));
  } else {
    fmt::print("tokens: {}\n", fmt::join(r.tokens, " "));
    std::fflush(stdout);
    print_speeds(prompt.size(), r);
  }
  return 0;
}

int run_prompt(const RunArgs& a) {
  if (a.tokenizer.empty()) throw compiler::OptionError("--prompt needs --tokenizer FILE (tokenizer.json or tokenizer.model)");
  if (a.generate >= 0 || !a.prompt_ids.empty()) throw compiler::OptionError("--prompt takes no --generate or --prompt-ids (use --max-new-tokens)");
  std::unique_ptr<tokenizer::Tokenizer> tok = tokenizer::load_tokenizer(a.tokenizer);
  Loaded l = load(a, "--prompt");
  const int64_t vocab = l.exec.outputs().at(0).shape.back();
  if (tok->vocab_size() > vocab)
    throw compiler::OptionError(fmt::format("--tokenizer {}: it has {} tokens, the program's logits {}: not this "
                                            "model's tokenizer",
                                            a.tokenizer, tok->vocab_size(), vocab));
  std::string text = *a.prompt;
  if (a.chat) {
    const tokenizer::ModelTokens& m = tok->model_tokens();
    if (m.chat_template.empty())
      throw compiler::OptionError(fmt::format("--chat: {} has no chat template (tokenizer_config.json's chat_template)",
                                              a.tokenizer));
    text = tokenizer::apply_chat_template(m.chat_template, {{"user", text}}, true, m.bos_token, m.eos_token);
  }
  // A chat template writes its own BOS; otherwise the tokenizer's special tokens, as
  // transformers' tokenizer(text) adds them.
  const std::vector<int64_t> prompt = a.no_special_tokens || a.chat ? tok->encode(text) : tok->encode_with_specials(text);
  if (prompt.empty()) throw compiler::OptionError("--prompt: the text encodes to no tokens");
  for (int64_t id : a.eos)
    if (id >= vocab) throw compiler::OptionError(fmt::format("--eos {}: the program's vocabulary has {} ids", id, vocab));

  runtime::GenerateOptions options;
  options.sampling = sampling(a);
  options.vocab = tok->vocab_size();
  options.stop_ids = !a.eos.empty() ? a.eos : l.exec.metadata_ints("get_eos_ids");
  if (options.stop_ids.empty()) options.stop_ids = tok->model_tokens().eos;
  const int64_t cache = l.exec.metadata_int("get_max_context_len").value_or(0);
  const int64_t room = cache > 0 ? cache - static_cast<int64_t>(prompt.size()) + 1 : 0;
  if (cache > 0 && room < 1)
    throw compiler::OptionError(fmt::format("--prompt: {} tokens; the program's cache holds {} positions", prompt.size(), cache));
  if (a.max_new_tokens) {
    options.max_new_tokens = static_cast<size_t>(*a.max_new_tokens);
    if (cache > 0 && *a.max_new_tokens > room) {
      fmt::print(stderr, "vkc: note: the cache holds {} positions: {} new tokens at most after {} prompt tokens\n", cache,
                 room, prompt.size());
      options.max_new_tokens = static_cast<size_t>(room);
    }
  } else {
    if (cache == 0) throw compiler::OptionError("--prompt: the program does not say its cache length; give --max-new-tokens N");
    options.max_new_tokens = static_cast<size_t>(room);
  }
  tokenizer::TextStream stream(*tok);
  if (!a.json)
    options.on_token = [&](int64_t id) {
      if (std::find(options.stop_ids.begin(), options.stop_ids.end(), id) != options.stop_ids.end()) return;
      const std::string piece = stream.push(id);
      std::fwrite(piece.data(), 1, piece.size(), stdout);
      std::fflush(stdout);
    };
  const runtime::GenerateResult r = runtime::generate(l.exec, prompt, options);
  std::vector<int64_t> body = r.tokens;
  if (r.stopped) body.pop_back();
  if (a.json) {
    nlohmann::ordered_json j = stats_json(a, l, r);
    j["prompt"] = *a.prompt;
    j["prompt_ids"] = prompt;
    j["tokens"] = r.tokens;
    j["text"] = tok->decode(body);
    j["stopped_at_eos"] = r.stopped;
    fmt::print("{}\n", j.dump(2));
    return 0;
  }
  const std::string rest = stream.finish();
  fmt::print("{}\n", rest);
  std::fflush(stdout);
  fmt::print(stderr, "{} tokens{}; ", r.tokens.size(), r.stopped ? " (stopped at EOS)" : "");
  print_speeds(prompt.size(), r);
  return 0;
}

}  // namespace vkc::tools
