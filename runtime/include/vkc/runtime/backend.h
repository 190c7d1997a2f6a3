// Backends run a program's delegates. A backend decodes a delegate payload once (init) and
// then executes it on host tensors, the way ExecuTorch's BackendInterface does. `cpu`
// interprets VulkanBackend payloads with the CPU reference kernels; `vulkan` (a later
// session) will dispatch the shader library on a GPU behind the same interface.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "vkc/ir/tensor_data.h"
#include "vkc/kernels/host_tensor.h"
#include "vkc/serializer/program.h"

namespace vkc::runtime {

/// A program that cannot be loaded or run; the message is one line naming what and where.
struct RuntimeError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Program::named_data by key (the constants delegates reference).
using NamedDataMap = std::unordered_map<std::string, ir::TensorData>;

/// Greedy decoding kept on the device: each step's most likely token becomes the next step's
/// token at the next position there, with no host work between steps (the host reads the tokens
/// a batch of steps at a time). A backend that can keep one gives it (DelegateInstance::decode_loop).
class DecodeLoop {
 public:
  virtual ~DecodeLoop() = default;
  /// `inputs` are the delegate's inputs, the tokens [1, 1] and input_pos of the first step among
  /// them (the others stay as given for every step). Runs up to `steps` steps; `on_token` gets each
  /// step's token in order and returns false to stop (steps already under way finish; their tokens
  /// are dropped). Returns the number of tokens given to on_token. Throws RuntimeError.
  virtual size_t run(std::span<const kernels::HostTensor* const> inputs, size_t steps,
                     const std::function<bool(int64_t)>& on_token) = 0;
  /// Does now the one-time work a run of `steps` steps needs (recording its command buffers), so
  /// that run() starts at once.
  virtual void prepare(size_t steps) = 0;
};

/// Which of a delegate's inputs and outputs a decode loop feeds and reads.
struct DecodeLoopSpec {
  size_t tokens = 0, position = 1;  // input indices: tokens [1, 1], input_pos (one element)
  size_t logits = 0;                // output index: logits of one row, [..., V]
  int64_t vocab = 0;                // only the first `vocab` logits are candidates (0: all)
  std::vector<std::vector<int64_t>> input_shapes;  // every input's shape at a step
};

/// One delegate, decoded and ready to run.
class DelegateInstance {
 public:
  virtual ~DelegateInstance() = default;
  /// `args` are the DelegateCall's tensors: the delegate's inputs, then its outputs. Outputs arrive
  /// with the plan's dtype and shape (and no data); execute() replaces each with a tensor of
  /// exactly that dtype and shape. Throws RuntimeError.
  virtual void execute(std::span<kernels::HostTensor* const> args) = 0;
  /// A greedy decode loop over this delegate (owned by it, valid until its next execute() or
  /// decode_loop() call), or null where the backend keeps none or the spec does not fit.
  virtual DecodeLoop* decode_loop(const DecodeLoopSpec& spec) {
    (void)spec;
    return nullptr;
  }
};

/// What the instances of one delegate share when a program with bounded dynamic dims is
/// instantiated at several sizes (one instance per size, serializer/dynamic_dims.h): constants
/// staged once, and state kept across runs (KV caches). Each backend keeps its own kind.
struct SharedDelegateState {
  virtual ~SharedDelegateState() = default;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string_view name() const = 0;
  /// Whether this backend runs delegates with this id (e.g. "VulkanBackend").
  virtual bool can_run(std::string_view delegate_id) const = 0;
  /// Decodes and prepares `delegate`; its payload and `named_data` outlive the instance.
  /// Throws RuntimeError.
  virtual std::unique_ptr<DelegateInstance> init(const serializer::BackendDelegate& delegate,
                                                 const NamedDataMap& named_data) = 0;
  /// init() for one size of a delegate that several instances share `shared` with (created by
  /// the first instance when null).
  virtual std::unique_ptr<DelegateInstance> init_shared(const serializer::BackendDelegate& delegate,
                                                        const NamedDataMap& named_data,
                                                        std::shared_ptr<SharedDelegateState>& shared) = 0;
};

/// The runtime operators (registry names) the cpu backend has kernels for, sorted.
std::vector<std::string> cpu_operators();

/// The backends this build has ("cpu").
std::vector<std::string> backend_names();
/// Throws RuntimeError for a name that is unknown or not built.
std::unique_ptr<Backend> make_backend(std::string_view name);

}  // namespace vkc::runtime
