// vkc::run / vkc::Session: execute a .pte on a runtime backend (cpu reference kernels, or a Vulkan
// device) from an application, as `vkc run` does.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "vkc/api/diagnostic.h"
#include "vkc/kernels/host_tensor.h"
#include "vkc/runtime/executor.h"
#include "vkc/runtime/sampler.h"
#include "vkc/tokenizer/tokenizer.h"

namespace vkc {

/// A tensor in host memory: dtype, shape, row-major little-endian bytes. Make one with
/// Tensor::of(ir::DType::Float32, {1, 3}, std::vector<float>{...}).
using Tensor = kernels::HostTensor;
/// A program input or output as the .pte declares it.
using TensorSpec = runtime::TensorSpec;

struct RunOptions {
  /// "cpu" (the reference kernels) or "vulkan" (the first discrete GPU, else any device).
  std::string backend = "cpu";
  /// The execution plan to run.
  std::string method = "forward";
  /// vulkan: enable VK_LAYER_KHRONOS_validation when it is installed.
  bool validation = false;
  /// External data files (.ptd) holding the program's constants (`vkc compile --external-weights`);
  /// none: FILE.ptd beside FILE.pte when it exists.
  std::vector<std::string> data_files;
};

struct RunResult {
  bool ok = false;
  std::vector<Diagnostic> diagnostics;  // one error naming what is wrong when !ok
  std::vector<Tensor> outputs;          // in the plan's output order

  explicit operator bool() const { return ok; }
};

struct GenerateResult {
  bool ok = false;
  std::vector<Diagnostic> diagnostics;  // one error when !ok
  std::vector<int64_t> tokens;          // the generated ids
  double prefill_tokens_per_s = 0, decode_tokens_per_s = 0;
  bool device_loop = false;  // the decode steps ran as a loop on the device (runtime/generate.h)

  explicit operator bool() const { return ok; }
};

/// Text generation (Session::generate_text, `vkc run --tokenizer --prompt`).
struct TextGenerateOptions {
  /// At most this many new tokens; 0: until EOS or the program's cache is full.
  size_t max_new_tokens = 0;
  /// Greedy by default (temperature 0); temperature, top_p, top_k and seed otherwise.
  runtime::SamplingOptions sampling;
  /// Stop ids; empty: the program's get_eos_ids, else the tokenizer's (its model files').
  std::vector<int64_t> eos;
  /// Add the special tokens the tokenizer puts around a text (BOS), as tokenizer(text) does.
  bool add_special_tokens = true;
  /// Wrap the prompt in the tokenizer's chat template as one user message (the template writes
  /// its own special tokens).
  bool chat = false;
  /// Called with each piece of text as it becomes final (streaming).
  std::function<void(std::string_view)> on_text;
};

struct TextResult {
  bool ok = false;
  std::vector<Diagnostic> diagnostics;  // one error when !ok
  std::vector<std::string> notes;       // e.g. new tokens cut to the cache
  std::string text;                     // the generated text (EOS not included)
  std::vector<int64_t> prompt_ids, tokens;
  bool stopped_at_eos = false;
  double prefill_seconds = 0, decode_seconds = 0;
  double prefill_tokens_per_s = 0, decode_tokens_per_s = 0;
  bool device_loop = false;  // the decode steps ran as a loop on the device (runtime/generate.h)

  explicit operator bool() const { return ok; }
};

/// A loaded program: its delegates initialized on one backend, ready to run many times. One Session
/// is used by one thread at a time; separate Sessions are independent.
class Session {
 public:
  /// Loads a .pte file / .pte bytes (copied) and initializes its delegates. Check ok().
  static Session open(const std::filesystem::path& pte, const RunOptions& options = {});
  static Session open(std::span<const uint8_t> pte, const RunOptions& options = {});

  Session(Session&&) noexcept;
  Session& operator=(Session&&) noexcept;
  ~Session();

  /// False when open() failed, or for a moved-from Session (which run() refuses).
  bool ok() const;
  explicit operator bool() const { return ok(); }
  /// Why open() failed (one error), empty otherwise.
  const std::vector<Diagnostic>& diagnostics() const;
  /// The plan's inputs and outputs (empty when !ok()).
  const std::vector<TensorSpec>& inputs() const;
  const std::vector<TensorSpec>& outputs() const;
  /// Runs the plan once. Inputs must match inputs() in dtype and element count (a shape with the
  /// same elements, e.g. [N] for [1, N], is accepted).
  RunResult run(const std::vector<Tensor>& inputs);
  /// Greedy generation with a program compiled with --max-seq-len (tokens and input_pos in, logits
  /// out; docs/llm.md): the prompt, then `n` tokens, as `vkc run --generate`. The cache lives in
  /// the session: generate once per freshly opened Session.
  GenerateResult generate(const std::vector<int64_t>& prompt, size_t n);
  /// The same for an encoder-decoder program (vkc compile --encoder; docs/encoder-decoder.md): its
  /// encoder method runs once on `encoder_inputs` (in the encoder's input order), and every step
  /// reads what it computed; `prompt` is the decoder's start ids.
  GenerateResult generate(const std::vector<int64_t>& prompt, size_t n, const std::vector<Tensor>& encoder_inputs);
  /// Text in, text out with a KV-cache program and its model's tokenizer (docs/llm.md): the
  /// prompt encoded (options.chat: through the chat template), generated until EOS, the token
  /// budget or the end of the cache, decoded. Errors (a tokenizer larger than the program's
  /// vocabulary, a prompt longer than the cache) are the one diagnostic.
  TextResult generate_text(const tokenizer::Tokenizer& tokenizer, const std::string& prompt,
                           const TextGenerateOptions& options = {});

 private:
  struct State;
  explicit Session(std::unique_ptr<State> s);
  std::vector<Diagnostic> not_open() const;
  std::unique_ptr<State> s_;
};

/// Session::open + run once. No exception escapes but std::bad_alloc.
RunResult run(const std::filesystem::path& pte, const std::vector<Tensor>& inputs, const RunOptions& options = {});
RunResult run(std::span<const uint8_t> pte, const std::vector<Tensor>& inputs, const RunOptions& options = {});

}  // namespace vkc
