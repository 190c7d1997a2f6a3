// Backends run a program's delegates. A backend decodes a delegate payload once (init) and
// then executes it on host tensors, the way ExecuTorch's BackendInterface does. `cpu`
// interprets VulkanBackend payloads with the CPU reference kernels; `vulkan` (a later
// session) will dispatch the shader library on a GPU behind the same interface.
#pragma once

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

/// One delegate, decoded and ready to run.
class DelegateInstance {
 public:
  virtual ~DelegateInstance() = default;
  /// `args` are the DelegateCall's tensors: the delegate's inputs, then its outputs. Outputs arrive
  /// with the plan's dtype and shape (and no data); execute() replaces each with a tensor of
  /// exactly that dtype and shape. Throws RuntimeError.
  virtual void execute(std::span<kernels::HostTensor* const> args) = 0;
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
