// ExecuTorch's external data file (.ptd, "FlatTensor"): a program's constants kept beside its .pte,
// found by key through the program's named data (the Vulkan payload's VkBytes name a key with
// offset UINT64_MAX). ExecuTorch's runtime takes the pair (Module(pte, ptd), llama_main
// --data_paths); several programs can share one file of weights, and a program whose weights
// exceed what a .pte holds comfortably keeps them here. Layout (all little-endian):
//   [flatbuffer root offset][FT01][FH01, u32 40, u64 flatbuffer_offset, flatbuffer_size,
//    segment_base_offset, segment_data_size][pad to 48][rest of the FlatTensor flatbuffer]
//   [zeros up to segment_base_offset (128-aligned)][segments, each 128-aligned]
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "vkc/serializer/program.h"
#include "vkc/serializer/pte_reader.h"

namespace vkc::serializer {

struct PtdFile {
  std::vector<NamedData> named_data;  // views into the file's bytes
  uint64_t file_size = 0;
};

/// Deferred keys (NamedData::deferred) the .ptd writers resolved: placeholder -> SHA-256 hex key.
using ResolvedKeys = std::map<std::string, std::string>;

/// Writes `named` (distinct keys) as a .ptd through a temporary file renamed into place; throws
/// SerializeError, never leaving a partial file. Segment bytes are streamed, not concatenated;
/// entries with deferred keys are hashed as they are written. Returns those keys.
ResolvedKeys write_ptd(const std::vector<NamedData>& named, const std::filesystem::path& out);
/// The same bytes in memory. Deterministic.
std::vector<uint8_t> serialize_ptd(const std::vector<NamedData>& named, ResolvedKeys* resolved = nullptr);
/// Puts the resolved keys in `program` where their placeholders stand (named data, delegate
/// payloads), for a program written after its .ptd.
void resolve_deferred_keys(Program& program, const ResolvedKeys& resolved);
/// The keys of `named`'s deferred entries, hashed now (the writers' way out when keys hashed as
/// written collide: equal constants the fingerprints kept apart).
ResolvedKeys hash_deferred_keys(const std::vector<NamedData>& named);

/// Memory-maps and checks a .ptd; throws SerializeError naming the file and what is wrong.
PtdFile read_ptd(const std::filesystem::path& path);
/// Parses `bytes` (views hold `keepalive`, or the caller keeps `bytes` alive).
PtdFile read_ptd_bytes(std::span<const uint8_t> bytes, std::shared_ptr<const void> keepalive = nullptr);

/// Moves `program`'s constants (every named data entry but the I/O names) out, for a .ptd.
std::vector<NamedData> take_external_data(Program& program);
/// Adds the blobs of `ptd` (read from `name`) to `pte`'s named data; a key in both is an error,
/// as ExecuTorch's runtime makes it.
void attach_external_data(PteFile& pte, PtdFile ptd, const std::string& name);

/// FILE.ptd beside FILE.pte: where a program's external data is looked for by default.
std::filesystem::path default_ptd_path(const std::filesystem::path& pte);

/// Reads `pte` with its external data: the files `data` names, or without any, FILE.ptd beside it
/// when that exists. Throws SerializeError naming the file and what is wrong.
PteFile read_program(const std::filesystem::path& pte, const std::vector<std::filesystem::path>& data = {});

}  // namespace vkc::serializer
