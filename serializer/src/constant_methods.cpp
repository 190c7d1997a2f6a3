#include "vkc/serializer/constant_methods.h"

#include <fmt/format.h>

#include <algorithm>

#include "vkc/serializer/errors.h"

namespace vkc::serializer {

void add_constant_methods(Program& program, const std::vector<ConstantMethod>& methods) {
  for (const ConstantMethod& m : methods) {
    if (std::any_of(program.plans.begin(), program.plans.end(), [&](const ExecutionPlan& p) { return p.name == m.name; }))
      throw SerializeError(fmt::format("the program already has a method '{}'", m.name));
    ExecutionPlan plan;
    plan.name = m.name;
    if (const auto* ints = std::get_if<std::vector<int64_t>>(&m.value)) {
      for (int64_t v : *ints) plan.values.emplace_back(v);
    } else if (const auto* i = std::get_if<int64_t>(&m.value)) {
      plan.values.emplace_back(*i);
    } else {
      plan.values.emplace_back(std::get<bool>(m.value));
    }
    for (size_t i = 0; i < plan.values.size(); ++i) plan.outputs.push_back(static_cast<int32_t>(i));
    plan.non_const_buffer_sizes = {0};
    program.plans.push_back(std::move(plan));
  }
}

std::optional<ConstantValue> constant_method_value(const ExecutionPlan& plan) {
  if (!plan.inputs.empty() || !plan.instructions.empty() || !plan.delegates.empty() || plan.outputs.empty())
    return std::nullopt;
  std::vector<int64_t> ints;
  std::optional<bool> flag;
  for (int32_t o : plan.outputs) {
    if (o < 0 || static_cast<size_t>(o) >= plan.values.size()) return std::nullopt;
    if (const auto* i = std::get_if<int64_t>(&plan.values[static_cast<size_t>(o)])) ints.push_back(*i);
    else if (const auto* b = std::get_if<bool>(&plan.values[static_cast<size_t>(o)])) flag = *b;
    else return std::nullopt;
  }
  if (flag && plan.outputs.size() == 1) return *flag;
  if (flag) return std::nullopt;
  if (ints.size() == 1) return ints[0];
  return ints;
}

std::string describe(const ConstantValue& value) {
  if (const auto* i = std::get_if<int64_t>(&value)) return std::to_string(*i);
  if (const auto* b = std::get_if<bool>(&value)) return *b ? "true" : "false";
  return fmt::format("[{}]", fmt::join(std::get<std::vector<int64_t>>(value), ", "));
}

}  // namespace vkc::serializer
