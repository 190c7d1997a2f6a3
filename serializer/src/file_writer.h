// Writing a file of ExecuTorch's layouts (.pte, .ptd) from a head and pieces that point into the
// program's data, through a temporary file renamed into place (internal).
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <vector>

#include "vkc/ir/tensor_data.h"

namespace vkc::serializer::detail {

/// A run of output bytes: a tensor's bytes, or `size` zeros if `tensor` is null. A tensor that is
/// derived or file-backed is written a chunk at a time, so that writing holds one chunk of it.
struct Piece {
  const ir::TensorData* tensor;
  uint64_t size;
  static Piece zeros(uint64_t n) { return {nullptr, n}; }
  static Piece of(const ir::TensorData& t) { return {&t, t.size()}; }
};

/// Writes `head` then `pieces` to `out` through a temporary file in the same folder that is
/// renamed into place; on failure removes it and throws SerializeError, never leaving a partial
/// `out`. Large files are written by two threads.
void write_pieces(const std::filesystem::path& out, std::span<const uint8_t> head, const std::vector<Piece>& pieces);

/// Whether two tensors of the same size hold the same bytes (derived ones compared a chunk at a time).
bool equal_bytes(const ir::TensorData& a, const ir::TensorData& b);

/// The same bytes in memory.
std::vector<uint8_t> concat_pieces(std::vector<uint8_t> head, const std::vector<Piece>& pieces);

}  // namespace vkc::serializer::detail
