#include "op_context.h"

#include <fmt/format.h>

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
  const int32_t mem = vk_tensor(id)->mem_obj_id;
  if (mem >= 0) {
    auto it = mem_owner.find(mem);
    if (it != mem_owner.end() && it->second != id)
      throw RuntimeError(fmt::format("{}: memory plan: value {} shares mem_obj {} with value {}, which overwrote it first",
                                     where, id, mem, it->second));
  }
  return *tensors[id];
}

OpContext::OpContext(GraphState& state, const serializer::VkOperatorCall& call) : state_(state), call_(call) {}

std::string OpContext::where() const { return fmt::format("node {} ({})", call_.node_id, call_.name); }

void OpContext::fail(const std::string& what) const { throw RuntimeError(fmt::format("{}: {}", where(), what)); }

const VkValue& OpContext::arg(size_t i) const {
  // The last arg is the output; kernels read schema arguments before it.
  if (i + 1 >= call_.args.size()) fail(fmt::format("argument {} is missing ({} args)", i, call_.args.size()));
  const int32_t id = call_.args[i];
  if (id < 0 || static_cast<size_t>(id) >= state_.graph->values.size())
    fail(fmt::format("argument {} refers to value {}, out of range", i, id));
  return state_.graph->values[id];
}

namespace {
const char* kind_name(const VkValue& v) {
  static const char* names[] = {"Null", "Int", "Double", "Bool", "Tensor", "IntList", "DoubleList",
                                "BoolList", "ValueList", "String", "SymInt"};
  return names[v.index()];
}
}  // namespace

bool OpContext::is_null(size_t i) const { return std::holds_alternative<serializer::VkNull>(arg(i)); }

const HostTensor& OpContext::tensor(size_t i) const {
  const VkValue& v = arg(i);
  if (!std::holds_alternative<serializer::VkTensor>(v)) fail(fmt::format("argument {} is {}, expected a Tensor", i, kind_name(v)));
  return state_.load(call_.args[i], where());
}

const HostTensor* OpContext::opt_tensor(size_t i) const {
  if (std::holds_alternative<serializer::VkNull>(arg(i))) return nullptr;
  return &tensor(i);
}

std::vector<const HostTensor*> OpContext::tensor_list(size_t i) const {
  const auto* list = std::get_if<serializer::VkValueList>(&arg(i));
  if (!list) fail(fmt::format("argument {} is {}, expected a ValueList of tensors", i, kind_name(arg(i))));
  std::vector<const HostTensor*> out;
  for (int32_t id : list->items) out.push_back(&state_.load(id, where()));
  return out;
}

int64_t OpContext::int_arg(size_t i) const {
  if (const auto* v = std::get_if<int64_t>(&arg(i))) return *v;
  if (const auto* v = std::get_if<serializer::VkSymInt>(&arg(i))) return v->value;
  fail(fmt::format("argument {} is {}, expected an Int or SymInt", i, kind_name(arg(i))));
}

double OpContext::float_arg(size_t i) const {
  if (const auto* v = std::get_if<double>(&arg(i))) return *v;
  fail(fmt::format("argument {} is {}, expected a Double", i, kind_name(arg(i))));
}

double OpContext::scalar_arg(size_t i) const {
  if (const auto* v = std::get_if<double>(&arg(i))) return *v;
  if (const auto* v = std::get_if<int64_t>(&arg(i))) return static_cast<double>(*v);
  fail(fmt::format("argument {} is {}, expected an Int or Double scalar", i, kind_name(arg(i))));
}

std::optional<double> OpContext::opt_scalar(size_t i) const {
  if (std::holds_alternative<serializer::VkNull>(arg(i))) return std::nullopt;
  return scalar_arg(i);
}

std::optional<int64_t> OpContext::opt_int(size_t i) const {
  if (std::holds_alternative<serializer::VkNull>(arg(i))) return std::nullopt;
  return int_arg(i);
}

bool OpContext::bool_arg(size_t i) const {
  if (const auto* v = std::get_if<bool>(&arg(i))) return *v;
  fail(fmt::format("argument {} is {}, expected a Bool", i, kind_name(arg(i))));
}

std::string OpContext::string_arg(size_t i) const {
  if (const auto* v = std::get_if<std::string>(&arg(i))) return *v;
  fail(fmt::format("argument {} is {}, expected a String", i, kind_name(arg(i))));
}

std::vector<int64_t> OpContext::int_list(size_t i) const {
  const VkValue& v = arg(i);
  if (const auto* l = std::get_if<serializer::VkIntList>(&v)) return l->items;
  if (const auto* l = std::get_if<serializer::VkValueList>(&v)) {  // ints mixed with SymInts
    std::vector<int64_t> out;
    for (int32_t id : l->items) {
      const VkValue& item = state_.graph->values.at(id);
      if (const auto* n = std::get_if<int64_t>(&item)) out.push_back(*n);
      else if (const auto* s = std::get_if<serializer::VkSymInt>(&item)) out.push_back(s->value);
      else fail(fmt::format("argument {}: list item {} is {}, expected Int or SymInt", i, id, kind_name(item)));
    }
    return out;
  }
  fail(fmt::format("argument {} is {}, expected an IntList", i, kind_name(v)));
}

std::optional<std::vector<int64_t>> OpContext::opt_int_list(size_t i) const {
  if (std::holds_alternative<serializer::VkNull>(arg(i))) return std::nullopt;
  return int_list(i);
}

std::optional<std::vector<double>> OpContext::opt_double_list(size_t i) const {
  const VkValue& v = arg(i);
  if (std::holds_alternative<serializer::VkNull>(v)) return std::nullopt;
  if (const auto* l = std::get_if<serializer::VkDoubleList>(&v)) return l->items;
  fail(fmt::format("argument {} is {}, expected a DoubleList", i, kind_name(v)));
}

void OpContext::set_output(HostTensor t) const {
  if (call_.args.empty()) fail("no output argument");
  const int32_t id = call_.args.back();
  if (!state_.vk_tensor(id)) fail(fmt::format("the output (value {}) is not a Tensor", id));
  state_.store(id, std::move(t), where());
}

void OpContext::set_outputs(std::vector<HostTensor> ts) const {
  if (call_.args.empty()) fail("no output argument");
  const int32_t id = call_.args.back();
  const auto* list = id >= 0 && static_cast<size_t>(id) < state_.graph->values.size()
                         ? std::get_if<serializer::VkValueList>(&state_.graph->values[id])
                         : nullptr;
  if (!list) fail(fmt::format("the output (value {}) is not a ValueList", id));
  if (list->items.size() != ts.size())
    fail(fmt::format("the output list has {} values, the kernel computed {}", list->items.size(), ts.size()));
  for (size_t k = 0; k < ts.size(); ++k) state_.store(list->items[k], std::move(ts[k]), where());
}

}  // namespace vkc::runtime::cpu
