# Every external dependency, found once. All come from Debian bookworm packages
# (scripts/setup.sh installs them). See docs/architecture.md for why each is here.
find_package(Threads REQUIRED)
find_package(Protobuf REQUIRED)            # must come before ONNX
find_package(ONNX CONFIG REQUIRED)         # targets: onnx, onnx_proto
find_package(FlatBuffers CONFIG REQUIRED)  # flatbuffers::flatbuffers, flatbuffers::flatc
find_package(Nettle REQUIRED)              # SHA-256 keys for named data (cmake/FindNettle.cmake)
find_package(fmt CONFIG REQUIRED)
find_package(nlohmann_json CONFIG REQUIRED) # JSON reports (vkc inspect --json)
find_package(CLI11 CONFIG REQUIRED)
# Tokenizers (tokenizer/): HF tokenizer.json patterns, Unicode normalization, SentencePiece models.
find_package(PCRE2 REQUIRED)                # PCRE2::PCRE2 (cmake/FindPCRE2.cmake)
find_package(utf8proc REQUIRED)             # utf8proc::utf8proc
find_package(SentencePiece REQUIRED)        # SentencePiece::SentencePiece
if(VKC_BUILD_TESTS)
  find_package(GTest REQUIRED)
endif()

# Shader codegen (codegen/, shader-specs/). shaderc is linked as libshaderc_combined.a plus
# glslang-dev and SPIRV-Tools static libraries: Debian's libshaderc.so lacks glslang symbols
# and crashes against glslang 12 (see docs/shader-specs.md, "Toolchain").
find_package(glslang CONFIG REQUIRED)         # glslang::glslang, glslang::SPIRV (needs Threads first)
find_package(SPIRV-Tools CONFIG REQUIRED)     # SPIRV-Tools-static
find_package(SPIRV-Tools-opt CONFIG REQUIRED) # SPIRV-Tools-opt
find_library(VKC_SHADERC_COMBINED shaderc_combined REQUIRED)
find_package(spirv_cross_core CONFIG REQUIRED) # spirv-cross-core (C++ reflection)
find_package(yaml-cpp CONFIG REQUIRED)         # target: yaml-cpp (0.7 has no namespace)
if(NOT TARGET vkc_shaderc)
  add_library(vkc_shaderc INTERFACE)
  target_link_libraries(vkc_shaderc INTERFACE ${VKC_SHADERC_COMBINED} glslang::glslang glslang::SPIRV
    glslang::glslang-default-resource-limits SPIRV-Tools-opt SPIRV-Tools-static Threads::Threads)
endif()
# The vulkan runtime backend (runtime/src/vulkan) links the loader: libvulkan-dev.
find_package(Vulkan REQUIRED)               # Vulkan::Vulkan
option(VKC_GPU_CHECKS "Build the standalone GPU check programs (tests/gpu/), which need a Vulkan device" OFF)
