#include "vkc/runtime/generate.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

namespace vkc::runtime {
namespace {

using Clock = std::chrono::steady_clock;

struct Signature {
  size_t tokens = 0, position = 1;
  int64_t seq = 1;
};

std::string signature(const Executor& exec, Signature& sig) {
  const auto& in = exec.inputs();
  if (in.size() < 2 || exec.outputs().empty())
    return fmt::format("the program has {} inputs; generation needs tokens [1, S] and input_pos [1] (compile a "
                       "decode-step graph with --max-seq-len N)",
                       in.size());
  for (size_t i = 0; i < 2; ++i) {
    const TensorSpec& t = in[i];
    if (!ir::is_integer(t.dtype)) return fmt::format("input {} is not an integer tensor", i);
    if (t.shape.size() == 2 && t.shape[0] == 1) {
      sig.tokens = i;
      sig.seq = t.shape[1];
    } else if (t.shape == std::vector<int64_t>{1}) {
      sig.position = i;
    } else {
      return fmt::format("input {} has shape [{}]; generation needs tokens [1, S] and input_pos [1]", i,
                         fmt::join(t.shape, ","));
    }
  }
  if (sig.tokens == sig.position) return "the program needs one tokens input [1, S] and one input_pos [1]";
  for (size_t i = 2; i < in.size(); ++i)
    if (!ir::is_float(in[i].dtype))
      return fmt::format("input {} ('{}') is not a float tensor; generation takes tokens and input_pos, then only "
                         "context inputs (an encoder's outputs)",
                         i, in[i].name);
  const auto& logits = exec.outputs()[0].shape;
  if (logits.size() < 2 || logits[logits.size() - 2] != sig.seq)
    return fmt::format("output 0 has shape [{}]; generation needs logits [1, {}, V]", fmt::join(logits, ","), sig.seq);
  return {};
}

template <typename T>
kernels::HostTensor ints_tensor(ir::DType dtype, std::vector<int64_t> shape, const std::vector<int64_t>& values) {
  std::vector<T> v(values.begin(), values.end());
  return kernels::HostTensor::of(dtype, std::move(shape), v);
}

kernels::HostTensor int_tensor(const TensorSpec& spec, const std::vector<int64_t>& values,
                               std::vector<int64_t> shape) {
  if (spec.dtype == ir::DType::Int32) return ints_tensor<int32_t>(spec.dtype, std::move(shape), values);
  return ints_tensor<int64_t>(ir::DType::Int64, std::move(shape), values);
}

}  // namespace

double GenerateResult::prefill_tokens_per_s() const {
  return prefill_seconds > 0 ? static_cast<double>(prompt_tokens) / prefill_seconds : 0;
}
double GenerateResult::decode_tokens_per_s() const {
  return decode_seconds > 0 && tokens.size() > 1 ? static_cast<double>(tokens.size() - 1) / decode_seconds : 0;
}

std::string generate_misfit(const Executor& exec) {
  Signature sig;
  return signature(exec, sig);
}

GenerateResult generate(Executor& exec, const std::vector<int64_t>& prompt, size_t n, int64_t max_positions) {
  GenerateOptions options;
  options.max_new_tokens = n;
  options.max_positions = max_positions;
  return generate(exec, prompt, options);
}

GenerateResult generate(Executor& exec, const std::vector<int64_t>& prompt, const GenerateOptions& options) {
  Signature sig;
  if (std::string why = signature(exec, sig); !why.empty()) throw RuntimeError(why);
  if (prompt.empty()) throw RuntimeError("the prompt is empty");
  const size_t n = options.max_new_tokens;
  const int64_t max_positions =
      options.max_positions > 0 ? options.max_positions : exec.metadata_int("get_max_context_len").value_or(0);
  if (max_positions > 0 && static_cast<int64_t>(prompt.size()) > max_positions)
    throw RuntimeError(fmt::format("the prompt has {} tokens; the program's cache holds {} positions", prompt.size(),
                                   max_positions));
  const int64_t total = static_cast<int64_t>(prompt.size() + n);
  if (max_positions > 0 && total - 1 > max_positions)
    throw RuntimeError(fmt::format("{} prompt + {} new tokens need {} positions; the program's cache holds {}",
                                   prompt.size(), n, total - 1, max_positions));
  const TensorSpec &tok_spec = exec.inputs()[sig.tokens], &pos_spec = exec.inputs()[sig.position];
  const size_t n_context = exec.inputs().size() - 2;
  if (options.context.size() != n_context) {
    std::string names;
    for (size_t i = 2; i < exec.inputs().size(); ++i)
      names += fmt::format("{}'{}'", names.empty() ? "" : ", ", exec.inputs()[i].name);
    throw RuntimeError(n_context == 0 ? fmt::format("the program takes no context inputs; {} given", options.context.size())
                                      : fmt::format("the program takes {} context input(s) after tokens and input_pos "
                                                    "({}): an encoder-decoder program's encoder method computes them "
                                                    "from the encoder's inputs; {} given",
                                                    n_context, names, options.context.size()));
  }
  Sampler sampler(options.sampling);
  // Feeds tokens [pos, pos + chunk.size()) and returns the token chosen from the logits row of the
  // last one. A program with a static S takes chunks padded to S; one whose sequence dim resizes
  // (--dim sequence=1..S) takes each chunk as it is (a decode step is one token).
  auto step = [&](const std::vector<int64_t>& chunk, int64_t pos) {
    std::vector<int64_t> ids = chunk;
    if (!tok_spec.dynamic) ids.resize(static_cast<size_t>(sig.seq), chunk.back());
    std::vector<kernels::HostTensor> ins(2);
    ins.insert(ins.end(), options.context.begin(), options.context.end());
    ins[sig.tokens] = int_tensor(tok_spec, ids, {1, static_cast<int64_t>(ids.size())});
    ins[sig.position] = int_tensor(pos_spec, {pos}, pos_spec.shape);
    auto outs = exec.run(ins);
    return sampler.next(outs[0], static_cast<int64_t>(chunk.size()) - 1, options.vocab);
  };
  GenerateResult r;
  r.prompt_tokens = prompt.size();
  // Greedy steps of one token run as a loop on the device where the program allows (the backend
  // picks each step's token there, as the sampler would); otherwise each step returns to the host.
  // The loop's one-time work (recording) is done before the prompt runs, outside both timings.
  const auto loop_inputs = [&](int64_t token, int64_t pos) {
    std::vector<kernels::HostTensor> ins(2);
    ins.insert(ins.end(), options.context.begin(), options.context.end());
    ins[sig.tokens] = int_tensor(tok_spec, {token}, {1, 1});
    ins[sig.position] = int_tensor(pos_spec, {pos}, pos_spec.shape);
    return ins;
  };
  const bool looping = options.sampling.temperature <= 0 && (tok_spec.dynamic || sig.seq == 1) && n > 1 &&
                       exec.prepare_decode_loop(loop_inputs(prompt.back(), 0), sig.tokens, sig.position,
                                                options.vocab, n - 1);
  auto t0 = Clock::now();
  int64_t next = 0;
  for (size_t at = 0; at < prompt.size(); at += static_cast<size_t>(sig.seq)) {
    const size_t len = std::min(prompt.size() - at, static_cast<size_t>(sig.seq));
    next = step({prompt.begin() + static_cast<std::ptrdiff_t>(at), prompt.begin() + static_cast<std::ptrdiff_t>(at + len)},
                static_cast<int64_t>(at));
  }
  r.prefill_seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  t0 = Clock::now();
  int64_t pos = static_cast<int64_t>(prompt.size());
  // Each token in order; false once generation ends at it.
  const auto take = [&](int64_t token) {
    r.tokens.push_back(token);
    if (options.on_token) options.on_token(token);
    r.stopped = std::find(options.stop_ids.begin(), options.stop_ids.end(), token) != options.stop_ids.end();
    return !r.stopped;
  };
  if (n > 0 && take(next) && n > 1) {
    const bool looped =
        looping && exec.run_decode_loop(loop_inputs(next, pos), sig.tokens, sig.position, options.vocab, n - 1, take);
    r.device_loop = looped;
    for (size_t i = 1; !looped && i < n; ++i) {
      next = step({next}, pos++);
      if (!take(next)) break;
    }
  }
  r.decode_seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  return r;
}

std::vector<kernels::HostTensor> encode(Executor& encoder, const Executor& decoder,
                                        const std::vector<kernels::HostTensor>& inputs) {
  std::vector<kernels::HostTensor> out = encoder.run(inputs);
  const auto& want = decoder.inputs();
  if (want.size() < 2 || out.size() != want.size() - 2)
    throw RuntimeError(fmt::format("the encoder method gives {} output(s); the decoder step takes {} context input(s)",
                                   out.size(), want.size() < 2 ? 0 : want.size() - 2));
  for (size_t i = 0; i < out.size(); ++i)
    if (out[i].dtype != want[i + 2].dtype || !want[i + 2].accepts(out[i].shape))
      throw RuntimeError(fmt::format("the encoder's output {} [{}] does not fit the decoder step's input '{}' [{}]", i,
                                     fmt::join(out[i].shape, ","), want[i + 2].name, fmt::join(want[i + 2].shape, ",")));
  return out;
}

}  // namespace vkc::runtime
