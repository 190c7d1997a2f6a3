// Links the bundle file the build made into the binary with the assembler's .incbin, so no
// multi-megabyte source file is generated. VKC_SHADER_BUNDLE_FILE is set by CMake.
#include "vkc/shaders/bundle.h"

__asm__(
    ".section .rodata\n"
    ".balign 16\n"
    ".hidden vkc_embedded_shader_bundle_begin\n"
    ".global vkc_embedded_shader_bundle_begin\n"
    "vkc_embedded_shader_bundle_begin:\n"
    ".incbin \"" VKC_SHADER_BUNDLE_FILE "\"\n"
    ".hidden vkc_embedded_shader_bundle_end\n"
    ".global vkc_embedded_shader_bundle_end\n"
    "vkc_embedded_shader_bundle_end:\n"
    ".previous\n");

extern "C" const uint8_t vkc_embedded_shader_bundle_begin[];
extern "C" const uint8_t vkc_embedded_shader_bundle_end[];

namespace vkc::shaders {

std::span<const uint8_t> embedded_bundle() {
  return {vkc_embedded_shader_bundle_begin,
          static_cast<size_t>(vkc_embedded_shader_bundle_end - vkc_embedded_shader_bundle_begin)};
}

}  // namespace vkc::shaders
