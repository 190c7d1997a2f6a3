// Dispatches of a matrix-vector linear's shader variant in either of its families: the _sg variants
// (partial sums added across subgroups) run where the device has subgroup arithmetic, the others
// elsewhere or with VKC_VULKAN_SUBGROUP=0 ("linear_q4_gemv_ep_f32_buffer" counts
// "linear_q4_gemv_sg_ep_f32_buffer" too; names without such a family count alone).
#pragma once

#include <cstdint>
#include <string>

#include "vkc/runtime/vulkan.h"

namespace vkc::test {

inline uint64_t gemv_dispatches(const std::string& name) {
  const size_t at = name.find("_gemv");
  const uint64_t own = runtime::vulkan_variant_dispatches(name);
  if (at == std::string::npos) return own;
  return own + runtime::vulkan_variant_dispatches(name.substr(0, at + 5) + "_sg" + name.substr(at + 5));
}

}  // namespace vkc::test
