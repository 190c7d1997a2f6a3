#include "resizing_delegate.h"

#include <fmt/format.h>

#include <algorithm>

#include "vkc/serializer/dynamic_dims.h"
#include "vkc/serializer/errors.h"
#include "vkc/serializer/vk_payload.h"

namespace vkc::runtime {
namespace {

using serializer::DynamicDims;

class ResizingDelegate final : public DelegateInstance {
 public:
  ResizingDelegate(Backend& backend, const serializer::BackendDelegate& d, const NamedDataMap& named)
      : backend_(backend), delegate_(d), named_(named) {
    try {
      for (const auto& spec : d.compile_specs)
        if (spec.key == serializer::kDynamicDimsKey) table_ = DynamicDims::decode(spec.value);
      auto payload = serializer::read_vk_payload(d.processed.bytes());
      graph_ = std::move(payload.graph);
      bytes_ = payload.bytes;
      for (const auto& y : table_.symbols)
        if (y.input >= graph_.input_ids.size()) throw serializer::SerializeError(fmt::format("dim '{}' names input {} of {}", y.name, y.input, graph_.input_ids.size()));
    } catch (const serializer::SerializeError& e) {
      throw RuntimeError(e.what());
    }
    // The largest and the smallest sizes are made at load, as a static program is: an LLM's
    // prefill chunks and its one-token decode steps then find theirs ready (shaders, pipelines
    // and memory set up). Other sizes are made when first met.
    instance_for(bound_symbols(true));
    instance_for(bound_symbols(false));
  }

  void execute(std::span<kernels::HostTensor* const> args) override {
    const size_t n_in = graph_.input_ids.size(), n_out = graph_.output_ids.size();
    if (args.size() != n_in + n_out)
      throw RuntimeError(fmt::format("{} args for {} inputs and {} outputs", args.size(), n_in, n_out));
    std::vector<std::vector<int64_t>> shapes;
    for (size_t i = 0; i < n_in; ++i) shapes.push_back(args[i]->shape);
    Instance& inst = instance_for([&] {
      try {
        return table_.symbol_values(shapes);
      } catch (const serializer::SerializeError& e) {
        throw RuntimeError(e.what());
      }
    }());
    for (size_t j = 0; j < n_out; ++j) *args[n_in + j] = kernels::HostTensor{args[n_in + j]->dtype, inst.output_dims[j], {}};
    inst.delegate->execute(args);
  }

  // The loop of the instance for the step's sizes.
  DecodeLoop* decode_loop(const DecodeLoopSpec& spec) override {
    std::vector<int64_t> symbols;
    try {
      symbols = table_.symbol_values(spec.input_shapes);
    } catch (const serializer::SerializeError&) {
      return nullptr;
    }
    return instance_for(symbols).delegate->decode_loop(spec);
  }

 private:
  struct Instance {
    std::vector<int64_t> symbols;
    serializer::BackendDelegate resized;  // its payload outlives the backend's instance
    std::unique_ptr<DelegateInstance> delegate;
    std::vector<std::vector<int64_t>> output_dims;
    uint64_t last_use = 0;
  };

  std::vector<int64_t> bound_symbols(bool max) const {
    std::vector<int64_t> s;
    for (const auto& y : table_.symbols) s.push_back(max ? y.max : y.min);
    return s;
  }

  Instance& instance_for(const std::vector<int64_t>& symbols) {
    ++clock_;
    for (auto& i : instances_)
      if (i->symbols == symbols) {
        i->last_use = clock_;
        return *i;
      }
    auto inst = std::make_unique<Instance>();
    inst->symbols = symbols;
    serializer::VkGraph g;
    try {
      g = table_.resized(graph_, symbols);
    } catch (const serializer::SerializeError& e) {
      throw RuntimeError(e.what());
    }
    for (uint32_t o : g.output_ids) {
      const auto& dims = std::get<serializer::VkTensor>(g.values.at(o)).dims;
      inst->output_dims.emplace_back(dims.begin(), dims.end());
    }
    inst->resized = {delegate_.id, ir::TensorData::owned(serializer::write_vk_payload(g, bytes_)), delegate_.compile_specs};
    inst->delegate = backend_.init_shared(inst->resized, named_, shared_);
    inst->last_use = clock_;
    if (instances_.size() >= kMaxInstances)
      instances_.erase(std::min_element(instances_.begin(), instances_.end(),
                                        [](const auto& a, const auto& b) { return a->last_use < b->last_use; }));
    instances_.push_back(std::move(inst));
    return *instances_.back();
  }

  Backend& backend_;
  const serializer::BackendDelegate& delegate_;
  const NamedDataMap& named_;
  DynamicDims table_;
  serializer::VkGraph graph_;
  std::span<const uint8_t> bytes_;
  std::shared_ptr<SharedDelegateState> shared_;
  std::vector<std::unique_ptr<Instance>> instances_;
  uint64_t clock_ = 0;
};

}  // namespace

bool has_dynamic_dims(const serializer::BackendDelegate& d) {
  return std::any_of(d.compile_specs.begin(), d.compile_specs.end(),
                     [](const auto& s) { return s.key == serializer::kDynamicDimsKey; });
}

std::unique_ptr<DelegateInstance> make_resizing_delegate(Backend& backend, const serializer::BackendDelegate& d,
                                                         const NamedDataMap& named) {
  return std::make_unique<ResizingDelegate>(backend, d, named);
}

}  // namespace vkc::runtime
