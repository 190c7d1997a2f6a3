// Greedy token generation with a program that keeps its KV cache inside (vkc compile
// --max-seq-len N): inputs tokens [1, S] (integer) and input_pos [1] (integer), output 0 logits
// [1, S, V] (or [S, V]). The prompt is fed S tokens at a time at positions 0, S, 2S, ...; a last
// short chunk is padded on the right, which is exact under causal attention (padding sits after
// every real token and is overwritten by the next write). Then each new token is fed at its position.
// Inputs after those two are context inputs, given once (an encoder-decoder program's encoder
// outputs: the cross-attention keys and values).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "vkc/runtime/executor.h"
#include "vkc/runtime/sampler.h"
#include "vkc/serializer/program_methods.h"

namespace vkc::runtime {

struct GenerateOptions {
  size_t max_new_tokens = 16;
  /// Generation ends after one of these (it is the last of `tokens`).
  std::vector<int64_t> stop_ids;
  SamplingOptions sampling;
  /// Positions the cache holds (0: the program's get_max_context_len, if it has one); a prompt and
  /// new tokens beyond it are an error.
  int64_t max_positions = 0;
  /// Only the first `vocab` logits are candidates (0: all): a tokenizer smaller than the program's
  /// padded vocabulary.
  int64_t vocab = 0;
  /// Called with each new token as soon as it is chosen (streaming).
  std::function<void(int64_t)> on_token;
  /// The program's inputs after tokens and input_pos, the same at every call: an encoder-decoder
  /// program's encoder outputs (encode()).
  std::vector<kernels::HostTensor> context;
};

/// Runs an encoder-decoder program's encoder method (`encoder`: the decoder's
/// Executor::method(serializer::kEncoderMethod)) once with `inputs` and returns its outputs, the
/// decoder step's context inputs (GenerateOptions::context). Throws RuntimeError when they do not
/// fit the step's context inputs.
std::vector<kernels::HostTensor> encode(Executor& encoder, const Executor& decoder,
                                        const std::vector<kernels::HostTensor>& inputs);

struct GenerateResult {
  std::vector<int64_t> tokens;  // the generated ids, in order
  bool stopped = false;         // ended at a stop id
  /// The decode steps ran as a loop on the device (greedy sampling, a backend that keeps one:
  /// Executor::run_decode_loop), not a host round trip a step.
  bool device_loop = false;
  double prefill_seconds = 0, decode_seconds = 0;
  size_t prompt_tokens = 0;
  /// Tokens per second of each phase (0 when the phase had no tokens).
  double prefill_tokens_per_s() const;
  double decode_tokens_per_s() const;
};

/// Why `exec` cannot generate (its signature), or empty.
std::string generate_misfit(const Executor& exec);

/// Runs the prompt, then up to options.max_new_tokens steps (greedy ones as a loop on the device
/// where the program and backend allow: the same tokens, no host work between steps). The cache state starts empty only on
/// a freshly loaded executor. Throws RuntimeError (a program that does not fit, a prompt + new
/// tokens over the cache).
GenerateResult generate(Executor& exec, const std::vector<int64_t>& prompt, const GenerateOptions& options);

/// Runs the prompt, then `n` greedy steps. The cache state starts empty only on a freshly loaded
/// executor. Throws RuntimeError (a program that does not fit, a prompt + n over the cache).
GenerateResult generate(Executor& exec, const std::vector<int64_t>& prompt, size_t n, int64_t max_positions = 0);

}  // namespace vkc::runtime
