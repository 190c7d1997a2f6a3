#include <fmt/format.h>

#include <unordered_map>

#include "vkc/serializer/build_program.h"
#include "vkc/serializer/errors.h"
#include "vkc/serializer/vk_payload.h"

namespace vkc::serializer {
namespace {

ScalarType scalar_type(const ir::Value* v) {
  switch (v->dtype()) {
    case ir::DType::Bool: return ScalarType::Bool;
    case ir::DType::UInt8: return ScalarType::Byte;
    case ir::DType::Int8: return ScalarType::Char;
    case ir::DType::Int16: return ScalarType::Short;
    case ir::DType::Int32: return ScalarType::Int;
    case ir::DType::Int64: return ScalarType::Long;
    case ir::DType::Float16: return ScalarType::Half;
    case ir::DType::Float32: return ScalarType::Float;
    case ir::DType::Float64: return ScalarType::Double;
    case ir::DType::BFloat16: return ScalarType::BFloat16;
    default:
      throw SerializeError(fmt::format("tensor '{}' has dtype {}, which ExecuTorch cannot hold", v->name(),
                                       ir::dtype_name(v->dtype())));
  }
}

constexpr uint64_t kTensorAlignment = 16;

// Plan-level values: every tensor crossing a delegate boundary or the graph boundary,
// each in its own 16-aligned slot of memory arena 1.
class PlanBuilder {
 public:
  int32_t tensor(const ir::Value* v) {
    if (auto it = ids_.find(v); it != ids_.end()) return it->second;
    if (v->is_constant())
      throw SerializeError(fmt::format("'{}' is a constant at the program boundary; not supported yet", v->name()));
    if (!v->shape().is_static()) throw SerializeError(fmt::format("tensor '{}' has no static shape", v->name()));
    EtTensor t;
    t.scalar_type = scalar_type(v);
    for (int64_t s : v->shape().sizes()) t.sizes.push_back(static_cast<int32_t>(s));
    t.allocation = AllocationInfo{1, arena_};
    arena_ += (static_cast<uint64_t>(v->type().nbytes()) + kTensorAlignment - 1) / kTensorAlignment * kTensorAlignment;
    plan_.values.emplace_back(std::move(t));
    return ids_[v] = static_cast<int32_t>(plan_.values.size() - 1);
  }
  ExecutionPlan& plan() { return plan_; }
  uint64_t arena() const { return arena_; }

 private:
  ExecutionPlan plan_;
  std::unordered_map<const ir::Value*, int32_t> ids_;
  uint64_t arena_ = 0;
};

}  // namespace

Program build_program(const ir::Graph& g, const partitioner::Partition& p, const CompileOptions& options) {
  if (p.num_rejected() > 0)
    throw SerializeError(fmt::format("{} node(s) are outside every delegate; CPU fallback is not supported yet",
                                     p.num_rejected()));
  Program program;
  PlanBuilder pb;
  ExecutionPlan& plan = pb.plan();
  plan.name = "forward";
  for (const ir::Value* v : g.inputs) plan.inputs.push_back(pb.tensor(v));
  const DtypeRules rules = DtypeRules::from(options);
  const std::vector<CompileSpec> specs = options.to_specs();
  for (size_t i = 0; i < p.delegates.size(); ++i) {
    const partitioner::Delegate& d = p.delegates[i];
    VkGraph vk = build_vk_graph(d, rules, program.named_data);
    plan.delegates.push_back({kVulkanBackendId, ir::TensorData::owned(write_vk_payload(vk)), specs});
    DelegateCall call{static_cast<int32_t>(i), {}};
    for (const ir::Value* v : d.inputs) call.args.push_back(pb.tensor(v));
    for (const ir::Value* v : d.outputs) call.args.push_back(pb.tensor(v));
    plan.instructions.emplace_back(std::move(call));
  }
  for (const ir::Value* v : g.outputs) plan.outputs.push_back(pb.tensor(v));
  plan.non_const_buffer_sizes = {0, static_cast<int64_t>(pb.arena())};
  program.plans.push_back(std::move(plan));
  return program;
}

}  // namespace vkc::serializer
