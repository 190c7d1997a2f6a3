// GPU limits the partitioner must honour.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "vkc/ir/shape.h"
#include "vkc/ir/storage.h"

namespace vkc::partitioner {

struct DeviceLimits {
  /// Largest 3-D texture extents (x, y, z).
  std::array<uint32_t, 3> texture = {16384, 16384, 2048};
  /// Largest buffer tensor, in bytes (maxStorageBufferRange).
  uint64_t max_buffer_bytes = 128ull * 1024 * 1024;
  /// What the limits are called in reasons, e.g. "default", "small-texture".
  std::string name = "default";

  static DeviceLimits default_limits() { return {}; }
  static DeviceLimits small_texture() { return {{2048, 2048, 2048}, 128ull * 1024 * 1024, "small-texture"}; }
};

/// Texture extents of a tensor in a layout, as ExecuTorch computes them: W = sizes[-1],
/// H = sizes[-2], C = sizes[-3], N = sizes[-4] (missing dims count as 1); the packed
/// dim is divided by 4, rounded up; extents = (W, H, C * N).
std::array<int64_t, 3> texture_extents(const std::vector<int64_t>& sizes, ir::Layout layout);

/// Why `rep` cannot hold a tensor of `type` under `limits`, or nullopt when it can,
/// e.g. "texture extent z=2100 > 2048 (small-texture)".
std::optional<std::string> rep_misfit(const ir::TensorType& type, ir::TensorRep rep, const DeviceLimits& limits);

}  // namespace vkc::partitioner
