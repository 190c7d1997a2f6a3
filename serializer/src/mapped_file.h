// A file mapped read-only, its bytes kept alive by a shared handle (internal).
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>

namespace vkc::serializer::detail {

struct MappedFile {
  std::span<const uint8_t> bytes;  // empty for an empty file
  std::shared_ptr<const void> keepalive;
};

/// Maps `path` (a regular file) read-only; throws SerializeError with the system's reason.
MappedFile map_file(const std::filesystem::path& path);

}  // namespace vkc::serializer::detail
