// Reads and validates an ExecuTorch .pte back into a Program.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <vector>

#include "vkc/serializer/program.h"

namespace vkc::serializer {

/// A DataSegment as stored: offset is relative to segment_base_offset.
struct SegmentInfo {
  uint64_t offset = 0, size = 0;
};

struct PteFile {
  Program program;
  uint64_t file_size = 0, program_size = 0, segment_base_offset = 0, segment_data_size = 0;
  std::vector<SegmentInfo> segments;
  int constant_segment_index = -1;
  std::vector<uint64_t> constant_offsets;  // constant_segment.offsets, [0] reserved
};

/// Memory-maps `path`; the TensorData views in the result keep the mapping
/// alive. Throws SerializeError naming the file and what is wrong.
PteFile read_pte(const std::filesystem::path& path);

/// Parses `bytes`. TensorData views point into `bytes` and hold `keepalive`
/// (without one, the caller keeps `bytes` alive). Throws SerializeError.
PteFile read_pte_bytes(std::span<const uint8_t> bytes,
                       std::shared_ptr<const void> keepalive = nullptr);

}  // namespace vkc::serializer
