// Dispatches of a shader variant or of its _sg twin: the matrix-vector linears' and the fused
// attention's _sg variants (sums and reductions across subgroups first) run where the device has
// subgroup arithmetic, the others elsewhere or with VKC_VULKAN_SUBGROUP=0.
// "linear_q4_gemv_ep_f32_buffer" also counts "linear_q4_gemv_sg_ep_f32_buffer",
// "sdpa_kv_cache_fused_rope_split_f32_texture3d" "sdpa_kv_cache_fused_sg_rope_split_f32_texture3d";
// names of no such family count alone.
#pragma once

#include <cstdint>
#include <string>

#include "vkc/runtime/vulkan.h"

namespace vkc::test {

inline uint64_t gemv_dispatches(const std::string& name) {
  const uint64_t own = runtime::vulkan_variant_dispatches(name);
  for (const std::string stem : {"_gemv", "sdpa_kv_cache_fused"}) {
    const size_t at = name.find(stem);
    if (at == std::string::npos) continue;
    const size_t end = at + stem.size();
    return own + runtime::vulkan_variant_dispatches(name.substr(0, end) + "_sg" + name.substr(end));
  }
  return own;
}

// The _dot twin of a matrix-vector variant ("linear_q4_gemv_ep_f16_texture3d" ->
// "linear_q4_gemv_dot_ep_f16_texture3d", "linear_dq8ca_q4_gemv_rowq_f32_buffer" ->
// "linear_dq8ca_q4_gemv_dot_rowq_f32_buffer"): the row's inputs staged once as integers and integer
// dot products (VKC_VULKAN_INT_DOT).
inline std::string dot_variant(const std::string& name) {
  const std::string stem = "_gemv";
  const size_t at = name.find(stem);
  return at == std::string::npos ? name : name.substr(0, at + stem.size()) + "_dot" + name.substr(at + stem.size());
}

// The 256-invocation copy of a matrix-vector variant ("linear_q4_gemv_sg_ep_f16_buffer" ->
// "linear_q4_gemv_sg_ep_w256_f16_buffer"): the runtime's choice past K = 2048 under
// VKC_VULKAN_GEMV_WIDE=1 where the family has one (the specs' local_size_variants); with `copy`
// "_w32", the 32-invocation copy VKC_VULKAN_GEMV_WIDE=32 takes.
inline std::string wide_variant(const std::string& name, const std::string& copy = "_w256") {
  for (const std::string dtype : {"_f32_", "_f16_"})
    if (const size_t at = name.rfind(dtype); at != std::string::npos) return name.substr(0, at) + copy + name.substr(at);
  return name;
}

}  // namespace vkc::test
