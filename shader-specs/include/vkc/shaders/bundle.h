// The shader library bundle this build made (shader-specs/*.yaml), compiled into the binary.
#pragma once

#include <cstdint>
#include <span>

namespace vkc::shaders {

/// The bytes of vkc_shaders.vksl (schema/shader_library.fbs); read with codegen::ShaderLibrary.
std::span<const uint8_t> embedded_bundle();

}  // namespace vkc::shaders
