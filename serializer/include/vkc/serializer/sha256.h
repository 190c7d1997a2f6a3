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

/// The same of bytes given in order, a run at a time (hashed as they are written).
class Sha256Stream {
 public:
  Sha256Stream();
  void update(std::span<const uint8_t> bytes);
  std::string hex();  // once, after the last update

 private:
  alignas(16) unsigned char ctx_[128];  // nettle's sha256_ctx
};

}  // namespace vkc::serializer
