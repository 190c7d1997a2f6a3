// Values get host tensors in their GPU dtype (FLOAT16 under force_fp16: math in fp32, rounded
// where stored; INT32 for downcast i64). Inputs and outputs convert between the plan's dtype
// and the GPU dtype as ET-VK's staging does. Shared memory objects (mem_obj_id) are not
// aliased, but a read of a value whose memory object another value has since written is an error.
#include "cpu_backend.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "cpu_dtypes.h"
#include "op_context.h"
#include "vkc/ir/op_registry.h"
#include "vkc/kernels/elementwise.h"
#include "vkc/serializer/vk_payload.h"

namespace vkc::runtime {
namespace {

using cpu::GraphState;
using kernels::HostTensor;
using serializer::VkGraph;
using serializer::VkTensor;

class CpuDelegate final : public DelegateInstance {
 public:
  CpuDelegate(const serializer::BackendDelegate& d, const NamedDataMap& named,
              std::shared_ptr<SharedDelegateState>* shared = nullptr) {
    serializer::VkPayload payload = serializer::read_vk_payload(d.processed.bytes());
    graph_ = std::move(payload.graph);
    state_.graph = &graph_;
    if (shared) {
      if (!*shared) *shared = std::make_shared<Shared>();
      auto* s = dynamic_cast<Shared*>(shared->get());
      if (!s) throw RuntimeError("a delegate's instances are shared across backends");
      state_.persistent = s->persistent;
    }
    state_.tensors.resize(graph_.values.size());
    uint64_t largest = 0;  // bytes of the largest tensor the graph declares
    for (size_t id = 0; id < graph_.values.size(); ++id) {
      const auto* t = std::get_if<VkTensor>(&graph_.values[id]);
      if (!t) continue;
      uint64_t bytes = 8;  // any dtype, as computed (f32/i64 at most 8 bytes)
      for (uint32_t d : t->dims)
        if (__builtin_mul_overflow(bytes, uint64_t{d}, &bytes) || bytes > (uint64_t{1} << 40))
          throw RuntimeError(fmt::format("value {} declares dims [{}]: more than 1 TiB", id, fmt::join(t->dims, ",")));
      largest = std::max(largest, bytes);
      if (t->constant_id >= 0) constants_.emplace_back(id, constant(*t, payload.bytes, named, id));
    }
    // Kernels allocate what their arguments compute; none needs more than a few times the largest
    // declared tensor, whatever a corrupt argument claims.
    allocation_limit_ = std::max<uint64_t>(4 * largest, uint64_t{256} << 20);
    for (const auto& call : graph_.chain) {
      auto it = cpu::op_table().find(call.name);
      if (it == cpu::op_table().end())
        throw RuntimeError(fmt::format("node {}: operator {} has no CPU kernel", call.node_id, call.name));
      const ir::OpDef* def = ir::find_op(call.name);
      if (def && call.args.size() != def->schema.args.size() + 1)
        throw RuntimeError(fmt::format("node {} ({}): {} args, the schema has {} plus the output", call.node_id,
                                       call.name, call.args.size(), def->schema.args.size()));
      ops_.push_back(it->second);
    }
  }

  void execute(std::span<HostTensor* const> args) override {
    const size_t n_in = graph_.input_ids.size(), n_out = graph_.output_ids.size();
    if (args.size() != n_in + n_out)
      throw RuntimeError(fmt::format("{} args for {} inputs and {} outputs", args.size(), n_in, n_out));
    const kernels::AllocationLimit limit(allocation_limit_);
    for (auto& t : state_.tensors) t.reset();
    state_.mem_owner.clear();
    for (const auto& [id, t] : constants_) state_.tensors[id] = t;
    for (size_t i = 0; i < n_in; ++i) stage_in(static_cast<int32_t>(graph_.input_ids[i]), *args[i], i);
    for (size_t k = 0; k < graph_.chain.size(); ++k) ops_[k](cpu::OpContext(state_, graph_.chain[k]));
    for (size_t j = 0; j < n_out; ++j) {
      const HostTensor& t = state_.load(static_cast<int32_t>(graph_.output_ids[j]), fmt::format("output {}", j));
      HostTensor& dst = *args[n_in + j];
      if (static_cast<size_t>(t.numel()) != static_cast<size_t>(HostTensor{dst.dtype, dst.shape, {}}.numel()))
        throw RuntimeError(fmt::format("output {}: {} elements for a plan tensor of [{}]", j, t.numel(),
                                       fmt::join(dst.shape, ",")));
      HostTensor out = t.dtype == dst.dtype ? t : kernels::cast(t, dst.dtype);
      dst = HostTensor{dst.dtype, dst.shape, out.data};
    }
  }

 private:
  struct Shared : SharedDelegateState {
    std::shared_ptr<std::map<std::pair<size_t, int>, HostTensor>> persistent =
        std::make_shared<std::map<std::pair<size_t, int>, HostTensor>>();
  };
  uint64_t allocation_limit_ = 0;

  HostTensor constant(const VkTensor& t, std::span<const uint8_t> bytes, const NamedDataMap& named, size_t id) {
    if (static_cast<size_t>(t.constant_id) >= graph_.constants.size())
      throw RuntimeError(fmt::format("value {}: constant {} is out of range", id, t.constant_id));
    const serializer::VkBytes& b = graph_.constants[t.constant_id];
    HostTensor h{cpu::gpu_dtype(t.dtype), std::vector<int64_t>(t.dims.begin(), t.dims.end()), {}};
    kernels::check_allocation(h.dtype, h.shape);  // dims × dtype size fits (and the product below)
    const size_t want = static_cast<size_t>(h.numel()) * ir::dtype_size(h.dtype);
    if (b.offset == std::numeric_limits<uint64_t>::max()) {
      auto it = named.find(b.named_key);
      if (it == named.end())
        throw RuntimeError(fmt::format("value {}: named data '{}' is not in the program nor in an external data file (a program compiled with --external-weights needs its .ptd: beside it as FILE.ptd, or given with --data)", id, b.named_key));
      h.data = it->second;
    } else {
      if (b.offset > bytes.size() || b.length > bytes.size() - b.offset)
        throw RuntimeError(fmt::format("value {}: constant bytes [{}, +{}) lie outside the payload", id, b.offset, b.length));
      // The payload's own bytes section (legacy; vkc writes named data): copied.
      h.data = ir::TensorData::owned({bytes.begin() + b.offset, bytes.begin() + b.offset + b.length});
    }
    if (h.data.size() != want)
      throw RuntimeError(fmt::format("value {}: constant has {} bytes, [{}] {} needs {}", id, h.data.size(),
                                     fmt::join(h.shape, ","), ir::dtype_name(h.dtype), want));
    return h;
  }

  // A plan tensor staged into its GPU dtype (Long -> Int, Double -> Float, Float -> Half).
  void stage_in(int32_t id, const HostTensor& x, size_t index) {
    const VkTensor* t = state_.vk_tensor(id);
    if (!t) throw RuntimeError(fmt::format("input {} (value {}) is not a tensor", index, id));
    const std::vector<int64_t> dims(t->dims.begin(), t->dims.end());
    if (x.numel() != HostTensor{x.dtype, dims, {}}.numel() || x.shape.size() != dims.size())
      throw RuntimeError(fmt::format("input {}: [{}] does not match the delegate's [{}]", index,
                                     fmt::join(x.shape, ","), fmt::join(dims, ",")));
    state_.store(id, HostTensor{x.dtype, dims, x.data}, fmt::format("input {}", index));
  }

  VkGraph graph_;
  GraphState state_;
  std::vector<std::pair<size_t, HostTensor>> constants_;
  std::vector<cpu::OpFn> ops_;
};

class CpuBackend final : public Backend {
 public:
  std::string_view name() const override { return "cpu"; }
  bool can_run(std::string_view id) const override { return id == "VulkanBackend"; }
  std::unique_ptr<DelegateInstance> init(const serializer::BackendDelegate& d, const NamedDataMap& named) override {
    return std::make_unique<CpuDelegate>(d, named);
  }
  std::unique_ptr<DelegateInstance> init_shared(const serializer::BackendDelegate& d, const NamedDataMap& named,
                                                std::shared_ptr<SharedDelegateState>& shared) override {
    return std::make_unique<CpuDelegate>(d, named, &shared);
  }
};

}  // namespace

std::unique_ptr<Backend> make_cpu_backend() { return std::make_unique<CpuBackend>(); }

std::vector<std::string> cpu_operators() {
  std::vector<std::string> out;
  for (const auto& [name, fn] : cpu::op_table()) out.push_back(name);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace vkc::runtime
