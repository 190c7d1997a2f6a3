// Builds the shader library: every spec under a directory -> variants -> validated
// SPIR-V (thread pool, content-hash cache) -> FlatBuffers bundle + C++ registry header.
// What `vkc shaders build` and the build-time host tool run.
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "vkc/codegen/compile.h"
#include "vkc/codegen/spec.h"

namespace vkc::codegen {

/// One line per failing variant ("FILE:LINE: variant NAME: ..."), after a summary line.
class BuildError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Every spec of a directory, parsed and expanded, and the files they read.
struct SpecSet {
  std::vector<std::unique_ptr<ShaderSpec>> specs;  // sorted by file name
  std::vector<Variant> variants;                   // sorted by name; names unique across specs
  std::map<std::string, std::string> templates;    // spec name -> template text
  IncludeMap includes;                             // <dir>/include/*
};

/// Reads `<dir>/*.yaml`, their `<name>.glsl` templates and `<dir>/include/`. Throws SpecError.
SpecSet load_specs(const std::filesystem::path& dir);

struct BuildOptions {
  std::filesystem::path specs_dir;   // shader-specs/
  std::filesystem::path bundle_out;  // the .vksl bundle; empty: not written
  std::filesystem::path header_out;  // the generated registry header; empty: not written
  std::filesystem::path cache_dir;   // compiled modules by content hash; empty: no cache
  std::filesystem::path glsl_out;    // if set, each compiled variant's GLSL as <name>.comp + manifest.txt
  unsigned jobs = 0;                 // worker threads; 0: one per hardware thread
  std::function<void(const std::string&)> log;  // progress lines, when set
};

struct BuildStats {
  size_t specs = 0, variants = 0;
  size_t compiled = 0, cached = 0, rewritten = 0;  // rewritten: KHR variants made from NV modules
  size_t optimizer_fallbacks = 0, unvalidated = 0;
  bool bundle_written = false, header_written = false;  // false: unchanged on disk
  std::vector<std::string> notes;  // one line per fallback or unvalidated variant
  std::string library_hash;
  double seconds = 0;
};

/// Throws SpecError for spec problems and BuildError when variants fail to compile,
/// validate or match their declarations. Outputs are only replaced when their content
/// changes, and are identical for identical inputs.
BuildStats build_library(const BuildOptions& options);

/// One line: "N variants from M specs: C compiled, K cached, R rewritten NV->KHR, ... in S s".
std::string summary(const BuildStats& stats);

/// codegen's version, part of every cache key and of the bundle's generator string.
inline constexpr const char* kCodegenVersion = "vkc-codegen 1";

}  // namespace vkc::codegen
