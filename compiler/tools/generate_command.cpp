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
#include "vkc/api/run.h"
#include "vkc/tokenizer/tokenizer.h"

namespace vkc::tools {
namespace {

using kernels::HostTensor;

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
  if (!a.expect_dir.empty() || !a.save_dir.empty())
    throw compiler::OptionError(fmt::format("{} takes no --expect or --save", what));
  auto t0 = Clock::now();
  std::unique_ptr<runtime::Backend> backend = runtime::make_backend(a.backend);
  runtime::Executor exec = runtime::Executor::load(a.pte, *backend, "forward",
                                                   std::vector<std::filesystem::path>(a.data.begin(), a.data.end()));
  Loaded l{std::move(backend), std::move(exec), ms_since(t0)};
  if (std::string why = runtime::generate_misfit(l.exec); !why.empty())
    throw compiler::OptionError(fmt::format("{}: {}", what, why));
  const bool encoder = l.exec.has_method(serializer::kEncoderMethod);
  if (!encoder && (!a.inputs.empty() || a.random_seed))
    throw compiler::OptionError(fmt::format("{} takes no --input or --random (they are an encoder-decoder program's "
                                            "encoder inputs; this program has no encoder method)",
                                            what));
  return l;
}

// An encoder-decoder program's encoder runs once on --input/--random: its outputs are the decoder
// step's context inputs. Other programs take none.
std::vector<HostTensor> context_inputs(const RunArgs& a, Loaded& l) {
  if (!l.exec.has_method(serializer::kEncoderMethod)) return {};
  auto t0 = Clock::now();
  runtime::Executor enc = l.exec.method(serializer::kEncoderMethod, *l.backend);
  std::vector<HostTensor> inputs;
  try {
    inputs = make_inputs(a, enc.inputs());
  } catch (const compiler::OptionError& e) {
    throw compiler::OptionError(fmt::format("the program's encoder method: {}", e.what()));
  }
  std::vector<HostTensor> out = runtime::encode(enc, l.exec, inputs);
  fmt::print(stderr, "encoder: {:.1f} ms\n", ms_since(t0));
  return out;
}

runtime::SamplingOptions sampling(const RunArgs& a) {
  return {a.temperature, a.top_p, a.top_k, a.seed};
}

void print_speeds(size_t prompt, const runtime::GenerateResult& r) {
  fmt::print(stderr,
             "prefill: {} tokens in {:.3f} s ({:.1f} tokens/s); decode: {} tokens in {:.3f} s ({:.1f} tokens/s{})\n",
             prompt, r.prefill_seconds, r.prefill_tokens_per_s(), r.tokens.empty() ? 0 : r.tokens.size() - 1,
             r.decode_seconds, r.decode_tokens_per_s(), r.device_loop ? ", a loop on the device" : "");
}

nlohmann::ordered_json stats_json(const RunArgs& a, const Loaded& l, const runtime::GenerateResult& r) {
  return {{"file", a.pte},
          {"backend", a.backend},
          {"load_ms", l.load_ms},
          {"prefill_s", r.prefill_seconds},
          {"decode_s", r.decode_seconds},
          {"prefill_tokens_per_s", r.prefill_tokens_per_s()},
          {"decode_tokens_per_s", r.decode_tokens_per_s()},
          {"decode_loop", r.device_loop ? "device" : "host"}};
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
  options.context = context_inputs(a, l);
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
  if (a.generate >= 0 || !a.prompt_ids.empty())
    throw compiler::OptionError("--prompt takes no --generate or --prompt-ids (use --max-new-tokens)");
  if (!a.inputs.empty() || a.random_seed || !a.expect_dir.empty() || !a.save_dir.empty())
    throw compiler::OptionError("--prompt takes no --input, --random, --expect or --save");
  std::unique_ptr<tokenizer::Tokenizer> tok = tokenizer::load_tokenizer(a.tokenizer);
  auto t0 = Clock::now();
  RunOptions ro;
  ro.backend = a.backend;
  ro.data_files = a.data;
  Session session = Session::open(a.pte, ro);
  if (!session.ok()) throw std::runtime_error(session.diagnostics().at(0).message);
  const double load_ms = ms_since(t0);
  TextGenerateOptions o;
  o.max_new_tokens = a.max_new_tokens ? static_cast<size_t>(*a.max_new_tokens) : 0;
  o.sampling = sampling(a);
  o.eos = a.eos;
  o.add_special_tokens = !a.no_special_tokens;
  o.chat = a.chat;
  if (!a.json)
    o.on_text = [](std::string_view piece) {
      std::fwrite(piece.data(), 1, piece.size(), stdout);
      std::fflush(stdout);
    };
  const TextResult r = session.generate_text(*tok, *a.prompt, o);
  if (!r.ok) throw std::runtime_error(r.diagnostics.at(0).message);
  for (const std::string& note : r.notes) fmt::print(stderr, "vkc: note: {}\n", note);
  if (a.json) {
    nlohmann::ordered_json j = {{"file", a.pte},
                                {"backend", a.backend},
                                {"prompt", *a.prompt},
                                {"prompt_ids", r.prompt_ids},
                                {"tokens", r.tokens},
                                {"text", r.text},
                                {"stopped_at_eos", r.stopped_at_eos},
                                {"load_ms", load_ms},
                                {"prefill_s", r.prefill_seconds},
                                {"decode_s", r.decode_seconds},
                                {"prefill_tokens_per_s", r.prefill_tokens_per_s},
                                {"decode_tokens_per_s", r.decode_tokens_per_s},
                                {"decode_loop", r.device_loop ? "device" : "host"}};
    fmt::print("{}\n", j.dump(2));
    return 0;
  }
  fmt::print("\n");
  std::fflush(stdout);
  fmt::print(stderr, "{} tokens{}; prefill: {} tokens in {:.3f} s ({:.1f} tokens/s); decode: {} tokens in {:.3f} s "
                     "({:.1f} tokens/s{})\n",
             r.tokens.size(), r.stopped_at_eos ? " (stopped at EOS)" : "", r.prompt_ids.size(), r.prefill_seconds,
             r.prefill_tokens_per_s, r.tokens.empty() ? 0 : r.tokens.size() - 1, r.decode_seconds, r.decode_tokens_per_s,
             r.device_loop ? ", a loop on the device" : "");
  return 0;
}

}  // namespace vkc::tools
