// The content-hash cache: one file per compiled module, <dir>/<sha256>.spv (codegen-internal).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace vkc::codegen {

struct CachedModule {
  std::vector<uint32_t> spirv;
  bool optimized = false;
  std::string note;
};

/// nullopt when absent or unreadable (then the module is compiled again).
std::optional<CachedModule> cache_load(const std::filesystem::path& dir, const std::string& key);
/// Writes atomically (temporary file + rename); failures are ignored (the cache is an optimization).
void cache_store(const std::filesystem::path& dir, const std::string& key, const CachedModule& m);

/// Writes `bytes` to `path` unless it already holds exactly them; true when written.
bool write_if_changed(const std::filesystem::path& path, const std::string& bytes);

}  // namespace vkc::codegen
