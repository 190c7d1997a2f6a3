// SHA-256 digests, used as named-data keys for constants.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "vkc/ir/tensor_data.h"

namespace vkc::serializer {

/// Lower-case hex SHA-256 of `bytes` (64 characters).
std::string sha256_hex(std::span<const uint8_t> bytes);

/// The same of a tensor's bytes, read a chunk at a time: a derived tensor is computed chunk by
/// chunk and not kept, a file-backed one's pages are let go of once hashed.
std::string sha256_hex_of(const ir::TensorData& data);

}  // namespace vkc::serializer
