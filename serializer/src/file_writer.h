// Writing a file of ExecuTorch's layouts (.pte, .ptd) from a head and pieces that point into the
// program's data, through a temporary file renamed into place (internal).
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <vector>

namespace vkc::serializer::detail {

/// A run of output bytes: `size` bytes at `data`, or `size` zeros if null.
struct Piece {
  const uint8_t* data;
  uint64_t size;
};

/// Writes `head` then `pieces` to `out` through a temporary file in the same folder that is
/// renamed into place; on failure removes it and throws SerializeError, never leaving a partial
/// `out`. Large files are written by two threads.
void write_pieces(const std::filesystem::path& out, std::span<const uint8_t> head, const std::vector<Piece>& pieces);

/// The same bytes in memory.
std::vector<uint8_t> concat_pieces(std::vector<uint8_t> head, const std::vector<Piece>& pieces);

}  // namespace vkc::serializer::detail
