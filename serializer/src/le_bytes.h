// Little-endian integer packing and alignment helpers (internal).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace vkc::serializer::detail {

constexpr uint64_t align_up(uint64_t n, uint64_t alignment) {
  return (n + alignment - 1) / alignment * alignment;
}

/// Appends the `sizeof(T)` little-endian bytes of `value`.
template <typename T>
void put_le(std::vector<uint8_t>& out, T value) {
  for (size_t i = 0; i < sizeof(T); ++i) out.push_back(static_cast<uint8_t>(uint64_t(value) >> (8 * i)));
}

/// Reads a `sizeof(T)`-byte little-endian unsigned integer.
template <typename T>
T get_le(const uint8_t* p) {
  uint64_t v = 0;
  for (size_t i = 0; i < sizeof(T); ++i) v |= uint64_t(p[i]) << (8 * i);
  return static_cast<T>(v);
}

}  // namespace vkc::serializer::detail
