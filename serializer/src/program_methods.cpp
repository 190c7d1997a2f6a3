#include "vkc/serializer/program_methods.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "vkc/serializer/errors.h"
#include "vkc/serializer/io_names.h"

namespace vkc::serializer {

void add_method(Program& into, Program from, const std::string& name) {
  auto named = [](auto& p, const std::string& n) {
    return std::find_if(p.plans.begin(), p.plans.end(), [&](const ExecutionPlan& e) { return e.name == n; });
  };
  if (named(into, name) != into.plans.end()) throw SerializeError(fmt::format("the program has a plan '{}' already", name));
  auto plan = named(from, "forward");
  if (plan == from.plans.end()) throw SerializeError(fmt::format("method '{}': the program has no plan 'forward'", name));
  // Constant-segment tensors are numbered from 1 in each program: the moved plan's follow into's.
  const auto shift = static_cast<uint32_t>(into.constants.size());
  for (EtValue& v : plan->values)
    if (auto* t = std::get_if<EtTensor>(&v); t && t->data_buffer_idx > 0) t->data_buffer_idx += shift;
  for (ir::TensorData& c : from.constants) into.constants.push_back(std::move(c));
  plan->name = name;
  into.plans.push_back(std::move(*plan));
  std::set<std::string> keys;
  for (const NamedData& nd : into.named_data) keys.insert(nd.key);
  for (NamedData& nd : from.named_data) {
    if (nd.key == kIoNamesKey) nd.key = io_names_key(name);
    else if (is_io_names_key(nd.key)) continue;  // another method of `from`, not moved
    if (keys.insert(nd.key).second) into.named_data.push_back(std::move(nd));
  }
}

}  // namespace vkc::serializer
