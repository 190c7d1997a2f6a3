#include <algorithm>
#include "vkc/ir/op_schema.h"

#include <fmt/format.h>

#include <cctype>
#include <stdexcept>

namespace vkc::ir {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> split_top_level(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '(' || s[i] == '[') ++depth;
    if (s[i] == ')' || s[i] == ']') --depth;
    if (s[i] == sep && depth == 0) {
      out.push_back(trim(s.substr(start, i - start)));
      start = i + 1;
    }
  }
  if (!trim(s.substr(start)).empty()) out.push_back(trim(s.substr(start)));
  return out;
}

[[noreturn]] void fail(std::string_view text, std::string_view why) {
  throw std::invalid_argument(fmt::format("bad op schema '{}': {}", text, why));
}

int64_t parse_int(std::string_view s, std::string_view text) {
  try {
    size_t used = 0;
    int64_t v = std::stoll(std::string(s), &used);
    if (used != s.size()) fail(text, "bad integer " + std::string(s));
    return v;
  } catch (const std::logic_error&) {
    fail(text, "bad integer " + std::string(s));
  }
}

double parse_double(std::string_view s, std::string_view text) {
  try {
    return std::stod(std::string(s));
  } catch (const std::logic_error&) {
    fail(text, "bad number " + std::string(s));
  }
}

// Default values: None, True/False, numbers, [a,b], and the ATen shorthand "int[2] x=0" -> [0,0].
Attribute parse_default(const ArgSpec& a, std::string_view v, size_t fixed_len, std::string_view text) {
  if (v == "None") return std::monostate{};
  switch (a.kind) {
    case ArgKind::Bool:
      if (v == "True") return true;
      if (v == "False") return false;
      fail(text, "bad bool default");
    case ArgKind::Int:
      return parse_int(v, text);
    case ArgKind::Float:
      return parse_double(v, text);
    case ArgKind::Scalar:
      if (v.find_first_of(".eE") != std::string_view::npos) return parse_double(v, text);
      return parse_int(v, text);
    case ArgKind::String:
      return std::string(trim(v).substr(1, v.size() - 2));
    case ArgKind::IntList: {
      std::vector<int64_t> items;
      if (v.front() == '[') {
        for (auto e : split_top_level(v.substr(1, v.size() - 2), ',')) items.push_back(parse_int(e, text));
      } else {
        items.assign(fixed_len ? fixed_len : 1, parse_int(v, text));
      }
      return items;
    }
    default:
      fail(text, "unsupported default for argument " + a.name);
  }
}

ArgSpec parse_arg(std::string_view decl, bool kwarg_only, std::string_view text) {
  ArgSpec a;
  a.kwarg_only = kwarg_only;
  std::string_view def;
  if (auto eq = decl.find('='); eq != std::string_view::npos) {
    def = trim(decl.substr(eq + 1));
    decl = trim(decl.substr(0, eq));
  }
  auto sp = decl.rfind(' ');
  if (sp == std::string_view::npos) fail(text, "argument without a name");
  a.name = std::string(trim(decl.substr(sp + 1)));
  std::string_view type = trim(decl.substr(0, sp));
  if (type.ends_with("?")) {
    a.optional = true;
    type.remove_suffix(1);
  }
  size_t fixed_len = 0;
  bool list = false;
  if (auto lb = type.find('['); lb != std::string_view::npos) {
    list = true;
    std::string_view n = type.substr(lb + 1, type.size() - lb - 2);
    if (!n.empty()) fixed_len = static_cast<size_t>(parse_int(n, text));
    type = type.substr(0, lb);
  }
  if (type == "Tensor") a.kind = list ? ArgKind::TensorList : ArgKind::Tensor;
  else if (type == "int" || type == "SymInt") {
    a.kind = list ? ArgKind::IntList : ArgKind::Int;
    a.symint = type == "SymInt" && !list;
  }
  else if (type == "float") a.kind = list ? ArgKind::FloatList : ArgKind::Float;
  else if (type == "bool") a.kind = list ? ArgKind::BoolList : ArgKind::Bool;
  else if (type == "Scalar" && !list) a.kind = ArgKind::Scalar;
  else if (type == "str" && !list) a.kind = ArgKind::String;
  else if (type == "ScalarType" || type == "Layout" || type == "Device" || type == "MemoryFormat") a.kind = ArgKind::None;
  else fail(text, "unknown type " + std::string(type));
  if (!def.empty()) a.default_value = parse_default(a, def, fixed_len, text);
  return a;
}

bool attr_matches(const ArgSpec& a, const Attribute& v) {
  if (std::holds_alternative<std::monostate>(v)) return a.optional || a.kind == ArgKind::None;
  switch (a.kind) {
    case ArgKind::Int: return std::holds_alternative<int64_t>(v);
    case ArgKind::IntList: return std::holds_alternative<std::vector<int64_t>>(v);
    case ArgKind::Float: return std::holds_alternative<double>(v) || std::holds_alternative<int64_t>(v);
    case ArgKind::FloatList: return std::holds_alternative<std::vector<double>>(v);
    case ArgKind::Bool: return std::holds_alternative<bool>(v);
    case ArgKind::BoolList: return std::holds_alternative<BoolList>(v);
    case ArgKind::Scalar: return std::holds_alternative<double>(v) || std::holds_alternative<int64_t>(v);
    case ArgKind::String: return std::holds_alternative<std::string>(v);
    default: return false;
  }
}

}  // namespace

OpSchema parse_op_schema(std::string_view text, std::string family) {
  OpSchema s;
  s.family = std::move(family);
  auto lp = text.find('(');
  auto arrow = text.rfind("->");
  if (lp == std::string_view::npos || arrow == std::string_view::npos) fail(text, "expected 'name(args) -> outputs'");
  auto rp = text.rfind(')', arrow);
  if (rp == std::string_view::npos || rp < lp) fail(text, "unbalanced parentheses");
  s.name = std::string(trim(text.substr(0, lp)));
  bool kwarg_only = false;
  for (auto decl : split_top_level(text.substr(lp + 1, rp - lp - 1), ',')) {
    if (decl == "*") {
      kwarg_only = true;
      continue;
    }
    s.args.push_back(parse_arg(decl, kwarg_only, text));
  }
  std::string_view outs = trim(text.substr(arrow + 2));
  if (outs.starts_with("(")) s.num_outputs = split_top_level(outs.substr(1, outs.size() - 2), ',').size();
  else if (outs == "Tensor[]") s.list_output = true;
  else s.num_outputs = 1;
  int lists = 0;
  for (const auto& a : s.args) lists += a.kind == ArgKind::TensorList;
  if (lists > 1) fail(text, "more than one Tensor[] argument");
  return s;
}

size_t OpSchema::num_tensor_args() const {
  size_t n = 0;
  for (const auto& a : args) n += a.kind == ArgKind::Tensor;
  return n;
}

size_t OpSchema::num_symint_inputs(size_t num_inputs) const {
  if (has_tensor_list() || num_inputs <= num_tensor_args()) return 0;
  size_t symints = 0;
  for (const ArgSpec& a : args) symints += a.symint;
  return std::min(symints, num_inputs - num_tensor_args());
}

bool OpSchema::has_tensor_list() const {
  for (const auto& a : args)
    if (a.kind == ArgKind::TensorList) return true;
  return false;
}

std::vector<std::string> OpSchema::check_attrs(const AttributeMap& attrs, size_t symint_inputs) const {
  std::vector<std::string> problems;
  for (const auto& [key, value] : attrs) {
    const ArgSpec* spec = nullptr;
    for (const auto& a : args)
      if (a.name == key) spec = &a;
    if (!spec || spec->kind == ArgKind::Tensor || spec->kind == ArgKind::TensorList)
      problems.push_back(fmt::format("'{}' is not a scalar argument of {}", key, name));
    else if (!attr_matches(*spec, value))
      problems.push_back(fmt::format("argument '{}' has the wrong kind: {}", key, attribute_str(value)));
  }
  for (const auto& a : args) {
    if (a.kind == ArgKind::Tensor || a.kind == ArgKind::TensorList || a.kind == ArgKind::None) continue;
    if (!attrs.count(a.name) && a.symint && symint_inputs > 0) {
      --symint_inputs;
      continue;
    }
    if (!attrs.count(a.name) && !a.default_value && !a.optional)
      problems.push_back(fmt::format("required argument '{}' is not set", a.name));
  }
  return problems;
}

}  // namespace vkc::ir
