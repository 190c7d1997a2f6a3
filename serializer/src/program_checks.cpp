#include "program_checks.h"

#include <fmt/format.h>

#include <limits>

#include "vkc/serializer/errors.h"

namespace vkc::serializer::detail {
namespace {

// Collects the context for one-line error messages.
struct PlanChecker {
  const ExecutionPlan& plan;
  size_t num_constants;
  const std::string& prefix;

  [[noreturn]] void fail(const std::string& what) const {
    throw SerializeError(fmt::format("{}plan '{}': {}", prefix, plan.name, what));
  }

  void value_index(int64_t index, const std::string& where, bool allow_none = false) const {
    if ((allow_none && index == -1) || (index >= 0 && size_t(index) < plan.values.size())) return;
    fail(fmt::format("{} refers to value {} of {}", where, index, plan.values.size()));
  }

  template <typename List>
  void value_indices(const List& list, const std::string& where, bool allow_none = false) const {
    for (int32_t index : list) value_index(index, where, allow_none);
  }

  void tensor(const EtTensor& t, size_t i) const {
    if (t.sizes.size() > 256) fail(fmt::format("value {}: tensor rank {} exceeds 256", i, t.sizes.size()));
    if (!t.dim_order.empty() && t.dim_order.size() != t.sizes.size())
      fail(fmt::format("value {}: tensor has {} sizes but {} dim_order entries", i, t.sizes.size(),
                       t.dim_order.size()));
    if (t.data_buffer_idx == 0) return;
    if (t.allocation)
      fail(fmt::format("value {}: planned tensor with initial data (data_buffer_idx {}) is not supported", i,
                       t.data_buffer_idx));
    if (t.data_buffer_idx > num_constants)
      fail(fmt::format("value {}: data_buffer_idx {} but there are {} constants", i, t.data_buffer_idx,
                       num_constants));
  }

  void instruction(const Instruction& instr, size_t i) const {
    const std::string where = fmt::format("instruction {}", i);
    if (auto* k = std::get_if<KernelCall>(&instr)) {
      if (k->op_index < 0 || size_t(k->op_index) >= plan.operators.size())
        fail(fmt::format("{} calls operator {} of {}", where, k->op_index, plan.operators.size()));
      value_indices(k->args, where);
    } else if (auto* d = std::get_if<DelegateCall>(&instr)) {
      if (d->delegate_index < 0 || size_t(d->delegate_index) >= plan.delegates.size())
        fail(fmt::format("{} calls delegate {} of {}", where, d->delegate_index, plan.delegates.size()));
      value_indices(d->args, where);
    } else if (auto* m = std::get_if<MoveCall>(&instr)) {
      value_index(m->from, where);
      value_index(m->to, where);
    } else if (auto* j = std::get_if<JumpFalseCall>(&instr)) {
      value_index(j->cond, where);
      // Jumping to the chain's end (its size) ends the chain, as after an else branch.
      if (j->destination < 0 || size_t(j->destination) > plan.instructions.size())
        fail(fmt::format("{} jumps to instruction {} of {}", where, j->destination, plan.instructions.size()));
    } else if (auto* f = std::get_if<FreeCall>(&instr)) {
      value_index(f->value, where);
    }
  }

  void run() const {
    value_indices(plan.inputs, "inputs");
    value_indices(plan.outputs, "outputs");
    for (size_t i = 0; i < plan.values.size(); ++i) {
      const EtValue& v = plan.values[i];
      if (auto* t = std::get_if<EtTensor>(&v)) tensor(*t, i);
      if (auto* l = std::get_if<EtTensorList>(&v)) value_indices(l->items, fmt::format("value {}", i));
      if (auto* l = std::get_if<EtOptionalTensorList>(&v))
        value_indices(l->items, fmt::format("value {}", i), /*allow_none=*/true);
    }
    for (size_t i = 0; i < plan.instructions.size(); ++i) instruction(plan.instructions[i], i);
  }
};

}  // namespace

std::optional<size_t> element_size(ScalarType type) {
  switch (type) {
    case ScalarType::Byte:
    case ScalarType::Char:
    case ScalarType::Bool: return 1;
    case ScalarType::Short:
    case ScalarType::Half:
    case ScalarType::BFloat16: return 2;
    case ScalarType::Int:
    case ScalarType::Float: return 4;
    case ScalarType::Long:
    case ScalarType::Double: return 8;
  }
  return std::nullopt;
}

std::optional<uint64_t> tensor_nbytes(const EtTensor& tensor) {
  std::optional<size_t> size = element_size(tensor.scalar_type);
  if (!size) return std::nullopt;
  uint64_t total = *size;
  for (int32_t dim : tensor.sizes) {
    if (dim < 0 || (dim != 0 && total > std::numeric_limits<uint64_t>::max() / uint64_t(dim))) return std::nullopt;
    total *= uint64_t(dim);
  }
  return total;
}

void check_plan(const ExecutionPlan& plan, size_t num_constants, const std::string& prefix) {
  PlanChecker{plan, num_constants, prefix}.run();
}

}  // namespace vkc::serializer::detail
