// A compiled variant, as the bundle and registry writers see it (codegen-internal).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "vkc/codegen/reflect.h"
#include "vkc/codegen/spec.h"

namespace vkc::codegen {

struct BuiltVariant {
  const Variant* variant = nullptr;
  std::vector<uint32_t> spirv;
  Reflection reflection;
  bool optimized = false;
  bool validated = false;
  std::string note;
  std::string hash;  // SHA-256 of the compile inputs
};

/// The FlatBuffers bundle (schema/shader_library.fbs); `variants` sorted by name.
std::vector<uint8_t> encode_bundle(const std::vector<BuiltVariant>& variants, const std::string& generator,
                                   const std::string& library_hash);

/// The generated C++ registry header: ShaderId enum and constexpr metadata table.
std::string registry_header(const std::vector<BuiltVariant>& variants, const std::string& library_hash);

/// Feature bits of the registry (kFeature* in the generated header), from capabilities.
uint32_t feature_bits(const std::vector<std::string>& capabilities);

}  // namespace vkc::codegen
