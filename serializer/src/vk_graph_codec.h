// VkGraph <-> VK00 flatbuffer bytes (internal; vk_payload.cpp adds the header).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "vkc/serializer/vk_graph.h"

namespace vkc::serializer::detail {

std::vector<uint8_t> encode_vk_graph(const VkGraph& graph);

/// Checks the VK00 identifier and runs the flatbuffers verifier first.
VkGraph decode_vk_graph(std::span<const uint8_t> flatbuffer);

}  // namespace vkc::serializer::detail
