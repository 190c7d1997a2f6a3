// fuzz_device_profile: device-profile YAML through the profile parser.
#include <cstdint>
#include <stdexcept>
#include <string_view>

#include "vkc/partitioner/device_profile.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    (void)vkc::partitioner::parse_device_profile(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz");
  } catch (const std::runtime_error&) {
  }
  return 0;
}
