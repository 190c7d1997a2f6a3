// Writing a file of ExecuTorch's layouts (.pte, .ptd) from a head and pieces that point into the
// program's data, through a temporary file renamed into place (internal).
#pragma once

#include <cstdint>
#include <exception>
#include <filesystem>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "vkc/ir/tensor_data.h"

namespace vkc::serializer::detail {

/// A run of output bytes: a tensor's bytes, or `size` zeros if `tensor` is null. A tensor that is
/// derived or file-backed is written a chunk at a time, so that writing holds one chunk of it.
/// Deferred keys: a piece may be hashed as it is written (`hash_slot` >= 0: its SHA-256 is the key
/// that stands in the head and in the pieces that `holds_keys` as the placeholder
/// `placeholders[hash_slot]`, a string of the key's length); once every piece is written, each
/// placeholder there is replaced by its digest. So a constant is read once, not hashed and then
/// read again (build_vk_graph's defer_keys_from).
struct Piece {
  const ir::TensorData* tensor;
  uint64_t size;
  int32_t hash_slot = -1;
  bool holds_keys = false;
  static Piece zeros(uint64_t n) { return {nullptr, n}; }
  static Piece of(const ir::TensorData& t) { return {&t, t.size()}; }
};

/// Writes `head` then `pieces` to `out` through a temporary file in the same folder that is
/// renamed into place; on failure removes it and throws SerializeError, never leaving a partial
/// `out`. Large files are written by two threads. With `placeholders`, the hashed pieces' digests
/// replace them (Piece) before the file is renamed into place; returns the digests by slot.
/// Thrown by write_pieces / concat_pieces when `accept` refuses the digests (two deferred
/// constants, or one and a key already there, turned out equal): nothing is left written.
struct KeysCollide : std::exception {
  const char* what() const noexcept override { return "deferred keys collide"; }
};
using AcceptDigests = std::function<bool(const std::vector<std::string>& digests)>;
/// Accepts digests that differ from each other and from `fixed` (the keys known before writing).
AcceptDigests new_keys_only(std::vector<std::string> fixed);
std::vector<std::string> write_pieces(const std::filesystem::path& out, std::span<const uint8_t> head,
                                      const std::vector<Piece>& pieces, const std::vector<std::string>& placeholders = {},
                                      const AcceptDigests& accept = {});

/// Replaces every placeholder found in `bytes` by the digest of its slot (same lengths).
void replace_placeholders(std::span<uint8_t> bytes, const std::vector<std::string>& placeholders,
                          const std::vector<std::string>& digests);

/// The same bytes in memory (placeholders replaced as write_pieces does; `digests` gets them).
std::vector<uint8_t> concat_pieces(std::vector<uint8_t> head, const std::vector<Piece>& pieces,
                                   const std::vector<std::string>& placeholders = {},
                                   std::vector<std::string>* digests = nullptr, const AcceptDigests& accept = {});

}  // namespace vkc::serializer::detail
