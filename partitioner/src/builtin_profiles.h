// The YAML text of partitioner/profiles/*.yaml, compiled in (generated: builtin_profiles.cpp).
#pragma once

#include <string_view>
#include <utility>
#include <vector>

namespace vkc::partitioner::detail {

/// (name, YAML text) for every built-in profile, sorted by name.
const std::vector<std::pair<std::string_view, std::string_view>>& builtin_profiles();

}  // namespace vkc::partitioner::detail
