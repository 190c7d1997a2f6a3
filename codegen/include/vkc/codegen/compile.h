// GLSL -> SPIR-V in-process: template assembly, shaderc compile, spirv-opt, spirv-val.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "vkc/codegen/spec.h"

namespace vkc::codegen {

/// A compile failure; what() starts with "FILE:LINE:" when the compiler named a line.
class CompileError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// The source the compiler sees: the template with, right after its `#version` line,
/// one `#define NAME VALUE` per parameter, `#define NAME_VALUE 1` when VALUE is an
/// identifier, LOCAL_SIZE_X/Y/Z, and a `#line` that keeps template line numbers.
std::string assemble_source(const Variant& v, std::string_view template_text);

/// Include files by name (what `#include "name"` resolves to).
using IncludeMap = std::map<std::string, std::string, std::less<>>;

struct CompiledModule {
  std::vector<uint32_t> spirv;
  bool optimized = false;
  std::string note;  // why not optimized, when the optimizer failed
};

/// One per thread: wraps a shaderc compiler.
class ShaderCompiler {
 public:
  explicit ShaderCompiler(const IncludeMap* includes);
  ~ShaderCompiler();
  ShaderCompiler(const ShaderCompiler&) = delete;
  ShaderCompiler& operator=(const ShaderCompiler&) = delete;

  /// Compiles unoptimized for the variant's Vulkan version, then runs the SPIRV-Tools
  /// performance passes (when the variant asks for them), falling back to the
  /// unoptimized module (noted) when they fail. Throws CompileError.
  CompiledModule compile(const Variant& v, const std::string& source, const std::string& source_name) const;

 private:
  struct Impl;
  Impl* impl_;
};

/// spirv-val (SPIRV-Tools, in-process) for Vulkan 1.<vk_minor>; returns "" when valid, else the message.
std::string validate_spirv(std::span<const uint32_t> words, int vk_minor);

/// Versions of the tools that determine the output (part of every cache key).
std::string toolchain_version();

}  // namespace vkc::codegen
