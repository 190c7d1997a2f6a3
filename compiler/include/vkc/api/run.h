// vkc::run / vkc::Session: execute a .pte on a runtime backend (cpu reference kernels, or a Vulkan
// device) from an application, as `vkc run` does.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "vkc/api/diagnostic.h"
#include "vkc/kernels/host_tensor.h"
#include "vkc/runtime/executor.h"

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
