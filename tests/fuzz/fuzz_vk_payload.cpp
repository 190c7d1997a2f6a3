// fuzz_vk_payload: a VulkanBackend payload (VH00 header + VkGraph flatbuffer + constant bytes)
// through the payload reader.
#include <cstdint>
#include <span>

#include "vkc/serializer/errors.h"
#include "vkc/serializer/vk_payload.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    (void)vkc::serializer::read_vk_payload(std::span<const uint8_t>(data, size));
  } catch (const vkc::serializer::SerializeError&) {
  }
  return 0;
}
