// fuzz_shader_spec: shader-spec YAML through the spec parser and variant expansion.
#include <cstdint>
#include <stdexcept>
#include <string_view>

#include "vkc/codegen/spec.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const auto spec = vkc::codegen::parse_spec(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.yaml");
    (void)vkc::codegen::expand_variants(spec);
  } catch (const std::runtime_error&) {  // SpecError and the YAML reader's errors
  }
  return 0;
}
