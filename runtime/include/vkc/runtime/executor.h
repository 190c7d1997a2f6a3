// Runs an ExecuTorch program (.pte) on host tensors: the execution plan's values, inputs and
// outputs, each DelegateCall on a Backend, and each KernelCall (the CPU fallback outside
// delegates, `aten::<op>.out`) with the cpu backend's kernels, whatever the backend.
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "vkc/kernels/host_tensor.h"
#include "vkc/runtime/backend.h"
#include "vkc/serializer/pte_reader.h"

namespace vkc::runtime {

/// A plan input or output as the program declares it.
struct TensorSpec {
  ir::DType dtype = ir::DType::Float32;
  std::vector<int64_t> shape;
  std::string name;  // the ONNX name, where the program keeps names (empty otherwise)
  /// Dynamic-bound: `shape` is the largest the tensor may be; each dim may be smaller (a program
  /// compiled for several sizes of a dim takes each of them).
  bool dynamic = false;
  int64_t numel() const;
  /// Whether a tensor of `got` dims fits: equal to `shape`, or (dynamic) of its rank and within it.
  bool accepts(const std::vector<int64_t>& got) const;
};

class Executor {
 public:
  /// Reads `pte` with its external data (`data`, or FILE.ptd beside it when that exists) and
  /// initializes every delegate of plan `method` on `backend` (which must outlive the executor).
  /// Throws RuntimeError (or the serializer's SerializeError).
  static Executor load(const std::filesystem::path& pte, Backend& backend, const std::string& method = "forward",
                       const std::vector<std::filesystem::path>& data = {});
  static Executor from_pte(serializer::PteFile pte, Backend& backend, const std::string& method = "forward");

  Executor(Executor&&) noexcept;
  Executor& operator=(Executor&&) noexcept;
  ~Executor();

  /// Whether the program has an execution plan `name`.
  bool has_method(const std::string& name) const;
  /// An executor of the program's plan `name`, its delegates initialized on `backend`: another
  /// method of the same file (an encoder-decoder program's "encoder"). Throws RuntimeError.
  Executor method(const std::string& name, Backend& backend) const;

  const std::vector<TensorSpec>& inputs() const;
  const std::vector<TensorSpec>& outputs() const;
  size_t num_delegates() const;
  /// The Int value of the program's constant method `name` (get_max_context_len,
  /// get_vocab_size...), nullopt when it has none; get_eos_ids: metadata_ints.
  std::optional<int64_t> metadata_int(const std::string& name) const;
  std::vector<int64_t> metadata_ints(const std::string& name) const;
  /// Runs the plan once. Inputs must match inputs() in dtype and shape. Throws RuntimeError.
  std::vector<kernels::HostTensor> run(const std::vector<kernels::HostTensor>& inputs);
  /// Greedy decoding kept on the device (backend.h's DecodeLoop): `inputs` as run() takes them, with
  /// the first step's token (input `tokens_input`, [1, 1]) and position (input `position_input`);
  /// each step's greedy token over the first `vocab` logits of output 0 (0: all) is the next step's,
  /// at the next position. `on_token` gets each token in order; false stops. Returns false, having
  /// run nothing, where the program cannot loop on the device (the plan is not one delegate call
  /// from its inputs to its outputs, or the backend keeps no loop for it). Throws RuntimeError.
  bool run_decode_loop(const std::vector<kernels::HostTensor>& inputs, size_t tokens_input, size_t position_input,
                       int64_t vocab, size_t steps, const std::function<bool(int64_t)>& on_token);
  /// Whether run_decode_loop with these arguments (the inputs' values aside) would loop on the
  /// device; if so, its one-time work (recording) is done now, so that the loop starts at once.
  bool prepare_decode_loop(const std::vector<kernels::HostTensor>& inputs, size_t tokens_input, size_t position_input,
                           int64_t vocab, size_t steps);

 private:
  std::string no_variant(const std::vector<kernels::HostTensor>& inputs) const;
  /// The delegate's decode loop for these inputs (DecodeLoopSpec), its arguments in `args`; null
  /// where the plan or the backend keeps none.
  DecodeLoop* decode_loop(const std::vector<kernels::HostTensor>& inputs, size_t tokens_input, size_t position_input,
                          int64_t vocab, std::vector<const kernels::HostTensor*>& args);
  struct State;
  explicit Executor(std::unique_ptr<State> s);
  std::unique_ptr<State> s_;
};

/// ir::DType of an ExecuTorch ScalarType; throws RuntimeError for one vkc does not hold.
ir::DType dtype_of(serializer::ScalarType t);

}  // namespace vkc::runtime
