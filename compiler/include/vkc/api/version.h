// The version of the vkc library (the project version in CMakeLists.txt).
#pragma once

#include <string_view>

namespace vkc {

/// "MAJOR.MINOR.PATCH".
std::string_view version();

}  // namespace vkc
