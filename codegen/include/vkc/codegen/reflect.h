// What a SPIR-V module declares, read back with SPIRV-Cross (resources, push constants,
// workgroup size) and a direct scan (capabilities, extensions), and the check of that
// against the spec's declarations.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "vkc/codegen/spec.h"

namespace vkc::codegen {

struct ReflectedBinding {
  uint32_t set = 0;
  uint32_t binding = 0;
  DescriptorType type = DescriptorType::StorageBuffer;
};

struct Reflection {
  std::vector<ReflectedBinding> bindings;  // sorted by (set, binding)
  uint32_t push_constant_bytes = 0;
  std::vector<std::string> push_constant_types;  // GLSL spelling per member, e.g. "ivec4"
  std::array<uint32_t, 3> local_size{0, 0, 0};
  bool local_size_id = false;              // OpExecutionModeId LocalSizeId (SPIR-V 1.6)
  uint32_t spirv_version = 0;              // 0x00010300 etc.
  uint32_t shared_bytes = 0;               // Workgroup variables' bytes (maxComputeSharedMemorySize)
  std::vector<std::string> capabilities;   // names, in module order
  std::vector<std::string> extensions;
};

/// Throws std::runtime_error when SPIRV-Cross cannot parse the module.
Reflection reflect(std::span<const uint32_t> spirv);

/// Capabilities and extensions only, by scanning the module's preamble (works for
/// modules SPIRV-Cross does not understand, e.g. KHR cooperative matrix).
void scan_capabilities(std::span<const uint32_t> spirv, Reflection& out);

/// Every difference between the variant's declarations (bindings, push constants,
/// local size) and the reflection; empty when they agree.
std::vector<std::string> check_reflection(const Variant& v, const Reflection& r);

/// Name of a SPIR-V capability number ("Capability<N>" when not in vkc's table).
std::string capability_name(uint32_t capability);

}  // namespace vkc::codegen
