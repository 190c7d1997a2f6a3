// What a GPU can do, as far as partitioning and shader choice care: limits and
// features. Built-in profiles are YAML files in partitioner/profiles/ compiled
// into the library; `--device-file` loads one from disk.
#pragma once

#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "vkc/partitioner/limits.h"

namespace vkc::partitioner {

enum class CoopMat { None, Nv, Khr };

struct CoopMatShape {
  uint32_t m = 0, n = 0, k = 0;
  std::string a_type, c_type;  // "f16", "f32", ...
  bool operator==(const CoopMatShape&) const = default;
};

struct DeviceProfile {
  std::string name;
  std::string description;
  DeviceLimits limits;  // texture extents and maxStorageBufferRange
  bool fp16 = true, int8 = true, int16 = true, int8_dot_product = false;
  uint32_t subgroup_size = 32;
  CoopMat cooperative_matrix = CoopMat::None;
  std::vector<CoopMatShape> cooperative_matrix_shapes;
};

/// A profile file that cannot be used: the message names the file, line and key.
struct ProfileError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Parses profile YAML; `source` names it in errors. Unknown or missing keys are errors.
DeviceProfile parse_device_profile(std::string_view yaml, const std::string& source);
DeviceProfile load_device_profile(const std::filesystem::path& file);
/// A built-in profile by name (default, small-texture, lavapipe, desktop-nvidia, adreno-7xx,
/// mali-valhall); throws ProfileError listing the names when unknown.
DeviceProfile builtin_device_profile(std::string_view name);
std::vector<std::string> builtin_device_profile_names();

}  // namespace vkc::partitioner
