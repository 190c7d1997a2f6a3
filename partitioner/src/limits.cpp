#include "vkc/partitioner/limits.h"

#include <fmt/format.h>

namespace vkc::partitioner {

std::array<int64_t, 3> texture_extents(const std::vector<int64_t>& sizes, ir::Layout layout) {
  auto dim = [&](size_t from_end) -> int64_t { return sizes.size() >= from_end ? sizes[sizes.size() - from_end] : 1; };
  int64_t w = dim(1), h = dim(2), c = dim(3), n = dim(4);
  switch (layout) {
    case ir::Layout::WidthPacked: w = (w + 3) / 4; break;
    case ir::Layout::HeightPacked: h = (h + 3) / 4; break;
    case ir::Layout::ChannelsPacked: c = (c + 3) / 4; break;
    default: break;  // packed int8 layouts live in buffers
  }
  return {w, h, c * n};
}

std::optional<std::string> rep_misfit(const ir::TensorType& type, ir::TensorRep rep, const DeviceLimits& limits) {
  if (!type.shape.is_static()) return std::string("dynamic shapes are not supported yet");
  const auto sizes = type.shape.sizes();
  if (rep.storage == ir::Storage::Buffer) {
    const uint64_t bytes = static_cast<uint64_t>(type.nbytes());
    if (bytes > limits.max_buffer_bytes)
      return fmt::format("buffer of {} bytes > {} ({})", bytes, limits.max_buffer_bytes, limits.name);
    return std::nullopt;
  }
  if (sizes.size() > 4) return fmt::format("rank {} > 4 cannot be a texture", sizes.size());
  const auto ext = texture_extents(sizes, rep.layout);
  static constexpr char kAxis[] = {'x', 'y', 'z'};
  for (size_t i = 0; i < 3; ++i)
    if (ext[i] > static_cast<int64_t>(limits.texture[i]))
      return fmt::format("texture extent {}={} > {} ({})", kAxis[i], ext[i], limits.texture[i], limits.name);
  return std::nullopt;
}

}  // namespace vkc::partitioner
