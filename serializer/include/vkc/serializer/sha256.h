// SHA-256 digests, used as named-data keys for constants.
#pragma once

#include <cstdint>
#include <span>
#include <string>

namespace vkc::serializer {

/// Lower-case hex SHA-256 of `bytes` (64 characters).
std::string sha256_hex(std::span<const uint8_t> bytes);

}  // namespace vkc::serializer
