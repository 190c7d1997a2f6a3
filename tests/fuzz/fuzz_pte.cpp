// fuzz_pte: .pte bytes through the program reader and the inspector (which also decodes every
// Vulkan payload: the VH00 header and its VkGraph flatbuffer).
#include <cstdint>
#include <span>

#include "vkc/vkc.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  (void)vkc::inspect(std::span<const uint8_t>(data, size));
  return 0;
}
