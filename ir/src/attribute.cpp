#include "vkc/ir/attribute.h"

#include <fmt/format.h>

namespace vkc::ir {
namespace {
template <typename T>
std::string list_str(const std::vector<T>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) s.push_back(',');
    s.append(fmt::format("{}", v[i]));
  }
  s.push_back(']');
  return s;
}
}  // namespace

std::string attribute_str(const Attribute& a) {
  struct Visitor {
    std::string operator()(std::monostate) const { return "None"; }
    std::string operator()(bool b) const { return b ? "true" : "false"; }
    std::string operator()(int64_t i) const { return std::to_string(i); }
    std::string operator()(double d) const { return fmt::format("{}", d); }
    std::string operator()(const std::string& s) const { return fmt::format("\"{}\"", s); }
    std::string operator()(const std::vector<int64_t>& v) const { return list_str(v); }
    std::string operator()(const std::vector<double>& v) const { return list_str(v); }
    std::string operator()(const BoolList& v) const {
      std::string s = "[";
      for (size_t i = 0; i < v.items.size(); ++i) s += std::string(i ? "," : "") + (v.items[i] ? "true" : "false");
      return s + "]";
    }
    std::string operator()(const std::vector<std::string>& v) const {
      std::string s = "[";
      for (size_t i = 0; i < v.size(); ++i) s += fmt::format("{}\"{}\"", i ? "," : "", v[i]);
      return s + "]";
    }
    std::string operator()(const TensorAttr& t) const { return fmt::format("tensor<{}>", t.type.str()); }
  };
  return std::visit(Visitor{}, a);
}

}  // namespace vkc::ir
