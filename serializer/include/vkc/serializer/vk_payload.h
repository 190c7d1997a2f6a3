// The Vulkan delegate payload: a 30-byte "VH00" header (padded to 32), the
// VkGraph flatbuffer (padded to 16), then a raw bytes section (padded to 16).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "vkc/serializer/vk_graph.h"

namespace vkc::serializer {

/// Encodes `graph` with `bytes_section` (legacy constant bytes; usually empty).
std::vector<uint8_t> write_vk_payload(const VkGraph& graph,
                                      std::span<const uint8_t> bytes_section = {});

struct VkPayload {
  VkGraph graph;
  std::span<const uint8_t> bytes;  // points into the span given to read_vk_payload
};

/// Validates the header as the ET-VK runtime does, then the VK00 identifier and
/// a full flatbuffers verification. Throws SerializeError.
VkPayload read_vk_payload(std::span<const uint8_t> payload);

}  // namespace vkc::serializer
