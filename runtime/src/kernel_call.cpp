#include "kernel_call.h"

#include <fmt/format.h>

#include <unordered_map>
#include <variant>

#include "cpu/op_context.h"
#include "vkc/ir/op_registry.h"
#include "vkc/runtime/backend.h"
#include "vkc/runtime/executor.h"
#include "vkc/serializer/build_program.h"

namespace vkc::runtime::detail {
namespace {

using kernels::HostTensor;
using serializer::VkDataType;

VkDataType vk_dtype(ir::DType t) {
  switch (t) {
    case ir::DType::Bool:
      return VkDataType::Bool;
    case ir::DType::UInt8:
      return VkDataType::UInt8;
    case ir::DType::Int8:
      return VkDataType::Int8;
    case ir::DType::Int32:
      return VkDataType::Int32;
    case ir::DType::Int64:
      return VkDataType::Int64;
    case ir::DType::Float16:
      return VkDataType::Float16;
    case ir::DType::Float32:
      return VkDataType::Float32;
    case ir::DType::Float64:
      return VkDataType::Float64;
    default:
      break;
  }
  throw RuntimeError(fmt::format("{} tensors are not supported in KernelCalls", ir::dtype_name(t)));
}

// The call's plan values as a one-operator VkGraph the cpu kernels read.
class CallGraph {
 public:
  CallGraph(const serializer::ExecutionPlan& plan, const std::function<HostTensor&(int32_t)>& value)
      : plan_(plan), value_(value) {
    state.graph = &graph;
  }

  // The graph value for plan value `id` (added once); tensors that hold data are loaded.
  int32_t add(int32_t id) {
    if (auto it = ids_.find(id); it != ids_.end()) return it->second;
    if (id < 0 || static_cast<size_t>(id) >= plan_.values.size())
      throw RuntimeError(fmt::format("value {} is out of range", id));
    serializer::VkValue v = std::visit([&](const auto& x) { return convert(x); }, plan_.values[id]);
    const int32_t gid = push(std::move(v));
    ids_[id] = gid;
    if (std::holds_alternative<serializer::VkTensor>(graph.values[gid])) {
      HostTensor& t = value_(id);
      if (t.numel() == 0 || t.data.size() > 0) state.tensors[gid] = t;
    }
    return gid;
  }
  int32_t push(serializer::VkValue v) {
    graph.values.push_back(std::move(v));
    state.tensors.emplace_back();
    return static_cast<int32_t>(graph.values.size() - 1);
  }

  serializer::VkGraph graph;
  cpu::GraphState state;

 private:
  serializer::VkValue convert(const serializer::EtNull&) { return serializer::VkNull{}; }
  serializer::VkValue convert(int64_t x) { return x; }
  serializer::VkValue convert(bool x) { return x; }
  serializer::VkValue convert(double x) { return x; }
  serializer::VkValue convert(const std::string& x) { return x; }
  serializer::VkValue convert(const serializer::EtIntList& x) { return serializer::VkIntList{x.items}; }
  serializer::VkValue convert(const serializer::EtDoubleList& x) { return serializer::VkDoubleList{x.items}; }
  serializer::VkValue convert(const serializer::EtBoolList& x) { return serializer::VkBoolList{x.items}; }
  serializer::VkValue convert(const serializer::EtTensor& t) {
    serializer::VkTensor vt;
    vt.dtype = vk_dtype(dtype_of(t.scalar_type));
    for (int32_t d : t.sizes) vt.dims.push_back(static_cast<uint32_t>(d));
    return vt;
  }
  serializer::VkValue convert(const serializer::EtTensorList& l) { return list(l.items); }
  serializer::VkValue convert(const serializer::EtOptionalTensorList& l) { return list(l.items); }
  serializer::VkValue list(const std::vector<int32_t>& items) {
    serializer::VkValueList out;
    for (int32_t i : items) out.items.push_back(i < 0 ? push(serializer::VkNull{}) : add(i));
    return out;
  }

  const serializer::ExecutionPlan& plan_;
  const std::function<HostTensor&(int32_t)>& value_;
  std::unordered_map<int32_t, int32_t> ids_;
};

// ExecuTorch's prim ops a program compiled for several input sizes runs: they read and write
// scalar values (0-d tensors here).
constexpr const char* kSymSize = "prim:aten::sym_size.int";
constexpr const char* kEqScalar = "prim:executorch_prim::eq.Scalar";

void run_prim_op(const serializer::KernelCall& call, const std::string& op,
                 const std::function<HostTensor&(int32_t)>& value) {
  if (call.args.size() != 3) throw RuntimeError(fmt::format("{} arguments, 3 expected", call.args.size()));
  if (op == kSymSize) {
    const HostTensor& self = value(call.args[0]);
    const int64_t dim = value(call.args[1]).get_i(0);
    const int64_t rank = static_cast<int64_t>(self.shape.size());
    if (dim < -rank || dim >= rank) throw RuntimeError(fmt::format("dim {} of a rank-{} tensor", dim, rank));
    value(call.args[2]) = HostTensor::of<int64_t>(ir::DType::Int64, {}, {self.shape[dim < 0 ? dim + rank : dim]});
    return;
  }
  const HostTensor &a = value(call.args[0]), &b = value(call.args[1]);
  const bool floating = ir::is_float(a.dtype) || ir::is_float(b.dtype);
  const bool same = floating ? a.get_f(0) == b.get_f(0) : a.get_i(0) == b.get_i(0);
  value(call.args[2]) = HostTensor::of<uint8_t>(ir::DType::Bool, {}, {same});
}

}  // namespace

std::string kernel_call_operator(const serializer::Operator& op) {
  if (op.name == "aten::sym_size" && op.overload == "int") return kSymSize;
  if (op.name == "executorch_prim::eq" && op.overload == "Scalar") return kEqScalar;
  for (const auto& [name, fn] : cpu::op_table()) {
    const auto k = serializer::portable_kernel(name);
    if (k && k->name == op.name && k->overload == op.overload) return name;
  }
  throw RuntimeError(fmt::format("operator {}.{} has no CPU kernel", op.name, op.overload));
}

void run_kernel_call(const serializer::ExecutionPlan& plan, const serializer::KernelCall& call, const std::string& op,
                     const std::function<HostTensor&(int32_t)>& value) {
  if (op.rfind("prim:", 0) == 0) return run_prim_op(call, op, value);
  const ir::OpDef* def = ir::find_op(op);
  if (!def) throw RuntimeError(fmt::format("{} is not a registry operator", op));
  const size_t num_args = def->schema.args.size();
  if (call.args.size() <= num_args)
    throw RuntimeError(
        fmt::format("{}: {} arguments, the schema has {} and an output", op, call.args.size(), num_args));
  CallGraph g(plan, value);
  serializer::VkOperatorCall vk_call{0, op, {}};
  for (size_t i = 0; i < num_args; ++i) vk_call.args.push_back(g.add(call.args[i]));
  // Outputs: one tensor, a Tensor[] list, or several tensors (passed to the kernel as a list).
  std::vector<int32_t> outputs(call.args.begin() + static_cast<std::ptrdiff_t>(num_args), call.args.end());
  if (outputs.size() == 1) {
    vk_call.args.push_back(g.add(outputs[0]));
  } else {
    serializer::VkValueList l;
    for (int32_t id : outputs) l.items.push_back(g.add(id));
    vk_call.args.push_back(g.push(l));
  }
  for (int32_t id : outputs) g.state.tensors[g.add(id)].reset();  // written by the kernel
  g.graph.chain.push_back(vk_call);
  const auto it = cpu::op_table().find(op);
  if (it == cpu::op_table().end()) throw RuntimeError(fmt::format("{} has no CPU kernel", op));
  it->second(cpu::OpContext(g.state, g.graph.chain.back()));
  // Copy what the kernel wrote back to the plan values (a Tensor[] output: its items).
  for (int32_t id : outputs) {
    const int32_t gid = g.add(id);
    if (const auto* l = std::get_if<serializer::VkValueList>(&g.graph.values[gid])) {
      const auto& items = std::get<serializer::EtTensorList>(plan.values[id]).items;
      for (size_t k = 0; k < items.size(); ++k) value(items[k]) = g.state.load(l->items[k], op);
    } else {
      value(id) = g.state.load(gid, op);
    }
  }
}

}  // namespace vkc::runtime::detail
