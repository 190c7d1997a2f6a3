#include "call_args.h"

#include <fmt/format.h>

#include "vkc/runtime/backend.h"

namespace vkc::runtime {

using serializer::VkValue;

const char* value_kind(const VkValue& v) {
  static const char* names[] = {"Null", "Int", "Double", "Bool", "Tensor", "IntList", "DoubleList",
                                "BoolList", "ValueList", "String", "SymInt"};
  return names[v.index()];
}

std::string CallArgs::where() const {
  if (call_->node_id == UINT32_MAX) return call_->name;
  return fmt::format("node {} ({})", call_->node_id, call_->name);
}

void CallArgs::fail(const std::string& what) const { throw RuntimeError(fmt::format("{}: {}", where(), what)); }

int32_t CallArgs::id(size_t i) const {
  const size_t readable = call_->args.size() - (output_last_ && !call_->args.empty() ? 1 : 0);
  if (i >= readable) fail(fmt::format("argument {} is missing ({} args)", i, call_->args.size()));
  const int32_t v = call_->args[i];
  if (v < 0 || static_cast<size_t>(v) >= graph_->values.size())
    fail(fmt::format("argument {} refers to value {}, out of range", i, v));
  return v;
}

int64_t CallArgs::symint(int32_t id, const serializer::VkSymInt& v) const {
  if (symints_)
    if (auto it = symints_->find(id); it != symints_->end()) return it->second;
  return v.value;
}

const VkValue& CallArgs::value(size_t i) const { return graph_->values[id(i)]; }

bool CallArgs::is_null(size_t i) const { return std::holds_alternative<serializer::VkNull>(value(i)); }

int64_t CallArgs::int_arg(size_t i) const {
  if (const auto* v = std::get_if<int64_t>(&value(i))) return *v;
  if (const auto* v = std::get_if<serializer::VkSymInt>(&value(i))) return symint(id(i), *v);
  fail(fmt::format("argument {} is {}, expected an Int or SymInt", i, value_kind(value(i))));
}

double CallArgs::float_arg(size_t i) const {
  if (const auto* v = std::get_if<double>(&value(i))) return *v;
  fail(fmt::format("argument {} is {}, expected a Double", i, value_kind(value(i))));
}

double CallArgs::scalar_arg(size_t i) const {
  if (const auto* v = std::get_if<double>(&value(i))) return *v;
  if (const auto* v = std::get_if<int64_t>(&value(i))) return static_cast<double>(*v);
  fail(fmt::format("argument {} is {}, expected an Int or Double scalar", i, value_kind(value(i))));
}

std::optional<double> CallArgs::opt_scalar(size_t i) const {
  if (is_null(i)) return std::nullopt;
  return scalar_arg(i);
}

std::optional<int64_t> CallArgs::opt_int(size_t i) const {
  if (is_null(i)) return std::nullopt;
  return int_arg(i);
}

bool CallArgs::bool_arg(size_t i) const {
  if (const auto* v = std::get_if<bool>(&value(i))) return *v;
  fail(fmt::format("argument {} is {}, expected a Bool", i, value_kind(value(i))));
}

std::string CallArgs::string_arg(size_t i) const {
  if (const auto* v = std::get_if<std::string>(&value(i))) return *v;
  fail(fmt::format("argument {} is {}, expected a String", i, value_kind(value(i))));
}

std::vector<int64_t> CallArgs::int_list(size_t i) const {
  const VkValue& v = value(i);
  if (const auto* l = std::get_if<serializer::VkIntList>(&v)) return l->items;
  if (const auto* l = std::get_if<serializer::VkValueList>(&v)) {  // ints mixed with SymInts
    std::vector<int64_t> out;
    for (int32_t item : l->items) {
      const VkValue& x = graph_->values.at(item);
      if (const auto* n = std::get_if<int64_t>(&x)) out.push_back(*n);
      else if (const auto* s = std::get_if<serializer::VkSymInt>(&x)) out.push_back(symint(item, *s));
      else fail(fmt::format("argument {}: list item {} is {}, expected Int or SymInt", i, item, value_kind(x)));
    }
    return out;
  }
  fail(fmt::format("argument {} is {}, expected an IntList", i, value_kind(v)));
}

std::optional<std::vector<int64_t>> CallArgs::opt_int_list(size_t i) const {
  if (is_null(i)) return std::nullopt;
  return int_list(i);
}

std::optional<std::vector<double>> CallArgs::opt_double_list(size_t i) const {
  if (is_null(i)) return std::nullopt;
  if (const auto* l = std::get_if<serializer::VkDoubleList>(&value(i))) return l->items;
  fail(fmt::format("argument {} is {}, expected a DoubleList", i, value_kind(value(i))));
}

std::vector<int32_t> CallArgs::value_list(size_t i) const {
  if (const auto* l = std::get_if<serializer::VkValueList>(&value(i))) return l->items;
  fail(fmt::format("argument {} is {}, expected a ValueList", i, value_kind(value(i))));
}

double CallArgs::q8_scale(size_t i) const {
  const double s = float_arg(i);
  if (!(s > 0) || !(s < 3.4e38)) fail(fmt::format("scale {} must be positive and finite", s));
  return s;
}

int64_t CallArgs::q8_zero_point(size_t i) const {
  const int64_t z = int_arg(i);
  if (z < -128 || z > 127) fail(fmt::format("zero point {} lies outside int8", z));
  return z;
}

bool CallArgs::relu_activation(size_t i) const {
  const std::string a = string_arg(i);
  if (a != "none" && a != "relu") fail("activation must be \"none\" or \"relu\", not \"" + a + "\"");
  return a == "relu";
}

}  // namespace vkc::runtime
