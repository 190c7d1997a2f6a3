// Operator families: the `family` of each op_registry.cpp entry, described in one table.
// `vkc inspect` counts them, --require-family gates on them, --list-families prints them.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace vkc::ir {

struct FamilyInfo {
  std::string name;         // as in op_registry.cpp
  std::string description;  // one line
  std::string counts_as;    // a quantized family also meets a gate on its float family ("" if none)
  std::vector<std::string> aliases;  // other spellings a gate accepts ("conv" for "convolution")
  std::vector<std::string> ops;      // registry operators of the family, in registry order
};

/// Every family of the registry, in order of first appearance; each has its table row.
const std::vector<FamilyInfo>& op_families();
/// The family named `name` or one of its aliases; null when unknown.
const FamilyInfo* find_family(std::string_view name);
/// Whether an operator of family `have` meets a gate requiring family `required` (a name or alias).
bool family_meets(std::string_view have, std::string_view required);

}  // namespace vkc::ir
