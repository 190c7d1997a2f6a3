// Writes an ExecuTorch .pte: Program flatbuffer with the "eh00" extended
// header, then 128-aligned segments (constants, delegate payloads, named data).
#pragma once

#include <cstdint>
#include <filesystem>
#include <vector>

#include "vkc/serializer/program.h"

namespace vkc::serializer {

/// Writes `program` to `out` through a temporary file in the same directory
/// that is renamed into place; on failure removes it and throws SerializeError,
/// never leaving a partial `out`. Segment bytes are streamed, not concatenated.
void write_pte(const Program& program, const std::filesystem::path& out);

/// The same bytes as write_pte, in memory. Deterministic.
std::vector<uint8_t> serialize_pte(const Program& program);

}  // namespace vkc::serializer
