#include "op_context.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cpu_dtypes.h"
#include "vkc/kernels/elementwise.h"
#include "vkc/runtime/backend.h"

namespace vkc::runtime::cpu {

using serializer::VkValue;

const serializer::VkTensor* GraphState::vk_tensor(int32_t id) const {
  if (id < 0 || static_cast<size_t>(id) >= graph->values.size()) return nullptr;
  return std::get_if<serializer::VkTensor>(&graph->values[id]);
}

void GraphState::store(int32_t id, HostTensor t, const std::string& where) {
  const serializer::VkTensor* vt = vk_tensor(id);
  if (!vt) throw RuntimeError(fmt::format("{}: output value {} is not a tensor", where, id));
  std::vector<int64_t> dims(vt->dims.begin(), vt->dims.end());
  // A 0-d value is held as [1] inside a delegate (its boundary keeps rank 0): one element either way.
  const std::vector<int64_t> one{1};
  if ((t.shape.empty() && dims == one) || (t.shape == one && dims.empty())) t.shape = dims;
  if (t.shape != dims)
    throw RuntimeError(fmt::format("{}: computed shape [{}] but value {} is declared [{}]", where,
                                   fmt::join(t.shape, ","), id, fmt::join(dims, ",")));
  const ir::DType want = gpu_dtype(vt->dtype);
  if (t.dtype != want) t = kernels::cast(t, want);
  if (vt->mem_obj_id >= 0) mem_owner[vt->mem_obj_id] = id;
  tensors[id] = std::move(t);
}

const HostTensor& GraphState::load(int32_t id, const std::string& where) const {
  if (id < 0 || static_cast<size_t>(id) >= tensors.size() || !vk_tensor(id))
    throw RuntimeError(fmt::format("{}: value {} is not a tensor", where, id));
  if (!tensors[id]) throw RuntimeError(fmt::format("{}: tensor value {} is read before it is written", where, id));
  // Kernels index a tensor by its shape: its bytes must be exactly that many (a corrupt program's
  // constant or a mis-sized result would otherwise be read past its end).
  const HostTensor& t = *tensors[id];
  uint64_t bytes = ir::dtype_size(t.dtype);
  bool overflow = false;
  for (int64_t d : t.shape) overflow = overflow || d < 0 || __builtin_mul_overflow(bytes, static_cast<uint64_t>(d), &bytes);
  if (overflow || bytes != t.data.size())
    throw RuntimeError(fmt::format("{}: tensor value {} holds {} bytes for shape [{}]", where, id, t.data.size(),
                                   fmt::join(t.shape, ",")));
  const int32_t mem = vk_tensor(id)->mem_obj_id;
  if (mem >= 0) {
    auto it = mem_owner.find(mem);
    if (it != mem_owner.end() && it->second != id)
      throw RuntimeError(fmt::format("{}: memory plan: value {} shares mem_obj {} with value {}, which overwrote it first",
                                     where, id, mem, it->second));
  }
  return *tensors[id];
}

OpContext::OpContext(GraphState& state, const serializer::VkOperatorCall& call)
    : CallArgs(state.graph, &call, true), state_(state) {
  set_symints(&state.symints);
}

void OpContext::set_symint_output(int64_t v) const {
  if (call_->args.empty()) fail("no output argument");
  const int32_t id = call_->args.back();
  if (id < 0 || static_cast<size_t>(id) >= state_.graph->values.size() ||
      !std::holds_alternative<serializer::VkSymInt>(state_.graph->values[id]))
    fail(fmt::format("the output (value {}) is not a SymInt", id));
  state_.symints[id] = v;
}

HostTensor& OpContext::persistent(int slot, const HostTensor& like) const {
  const auto index = static_cast<size_t>(call_ - state_.graph->chain.data());
  auto [it, fresh] = state_.persistent->try_emplace({index, slot});
  if (fresh) it->second = HostTensor::zeros(like.dtype, like.shape);
  return it->second;
}

const HostTensor& OpContext::tensor(size_t i) const {
  const VkValue& v = value(i);
  if (!std::holds_alternative<serializer::VkTensor>(v))
    fail(fmt::format("argument {} is {}, expected a Tensor", i, value_kind(v)));
  return state_.load(call_->args[i], where());
}

const HostTensor* OpContext::opt_tensor(size_t i) const {
  if (is_null(i)) return nullptr;
  return &tensor(i);
}

std::vector<const HostTensor*> OpContext::tensor_list(size_t i) const {
  const auto* list = std::get_if<serializer::VkValueList>(&value(i));
  if (!list) fail(fmt::format("argument {} is {}, expected a ValueList of tensors", i, value_kind(value(i))));
  std::vector<const HostTensor*> out;
  for (int32_t id : list->items) out.push_back(&state_.load(id, where()));
  return out;
}

void OpContext::set_output(HostTensor t) const {
  if (call_->args.empty()) fail("no output argument");
  const int32_t id = call_->args.back();
  if (!state_.vk_tensor(id)) fail(fmt::format("the output (value {}) is not a Tensor", id));
  state_.store(id, std::move(t), where());
}

void OpContext::set_input_tensor(size_t i, HostTensor t) const {
  if (i >= call_->args.size() || !state_.vk_tensor(call_->args[i])) fail(fmt::format("argument {} is not a Tensor", i));
  state_.store(call_->args[i], std::move(t), where());
}

void OpContext::set_outputs(std::vector<HostTensor> ts) const {
  if (call_->args.empty()) fail("no output argument");
  const int32_t id = call_->args.back();
  const auto* list = id >= 0 && static_cast<size_t>(id) < state_.graph->values.size()
                         ? std::get_if<serializer::VkValueList>(&state_.graph->values[id])
                         : nullptr;
  if (!list) fail(fmt::format("the output (value {}) is not a ValueList", id));
  if (list->items.size() != ts.size())
    fail(fmt::format("the output list has {} values, the kernel computed {}", list->items.size(), ts.size()));
  for (size_t k = 0; k < ts.size(); ++k) state_.store(list->items[k], std::move(ts[k]), where());
}

}  // namespace vkc::runtime::cpu
