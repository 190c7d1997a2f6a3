// The `cpu` backend: interprets VulkanBackend payloads (VkGraph) with the CPU reference kernels.
#pragma once

#include "vkc/runtime/backend.h"

namespace vkc::runtime {

std::unique_ptr<Backend> make_cpu_backend();

}  // namespace vkc::runtime
