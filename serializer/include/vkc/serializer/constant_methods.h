// Constant methods: execution plans that take nothing and return values, the way ExecuTorch's
// exporter writes a model's metadata (get_max_seq_len, use_kv_cache, get_eos_ids...; ExecuTorch's
// LLM runner reads them with Module::get). One plan per method: its values are the outputs, one
// empty chain, no operators or delegates.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "vkc/serializer/program.h"

namespace vkc::serializer {

/// An Int, a Bool, or several Ints (each an output of its own, as get_eos_ids).
using ConstantValue = std::variant<int64_t, bool, std::vector<int64_t>>;

struct ConstantMethod {
  std::string name;
  ConstantValue value;
};

/// Appends one plan per method. Throws SerializeError when a plan of that name exists.
void add_constant_methods(Program& program, const std::vector<ConstantMethod>& methods);

/// The plan's value when it is a constant method (no inputs, no instructions, only Int/Bool
/// outputs), else nullopt.
std::optional<ConstantValue> constant_method_value(const ExecutionPlan& plan);

/// "8", "true", "[2, 7]".
std::string describe(const ConstantValue& value);

}  // namespace vkc::serializer
