#include "vkc/api/version.h"

#ifndef VKC_VERSION
#error "VKC_VERSION must be defined by the build"
#endif

namespace vkc {

std::string_view version() { return VKC_VERSION; }

}  // namespace vkc
