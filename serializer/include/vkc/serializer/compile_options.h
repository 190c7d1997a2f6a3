// Vulkan delegate compile options and their CompileSpec encoding, byte for
// byte as ET-VK's partitioner writes and its preprocess/runtime read them:
// enums are u32 little-endian, bools one byte (0 or 1), texture limits three
// u32 keys texture_limits_{x,y,z}.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace vkc::serializer {

/// GPU resource kind of a tensor (values of vkgraph::VkStorageType).
enum class StorageType : uint8_t { Buffer = 0, Texture3D = 1, Texture2D = 2, Default = 255 };

/// Packing of a tensor in GPU memory (values of vkgraph::VkMemoryLayout; 7 is unused).
enum class MemoryLayout : uint8_t {
  WidthPacked = 0,
  HeightPacked = 1,
  ChannelsPacked = 2,
  PackedInt8_4W4C = 3,
  PackedInt8_4H4W = 4,
  PackedInt8_4W = 5,
  PackedInt8_4C = 6,
  PackedInt8_4C1W = 8,
  PackedInt8_Conv2d = 9,
  Default = 255,
};

/// "buffer", "texture3d", "texture2d", "default".
std::string_view to_string(StorageType type);
/// "width_packed", "channels_packed", "packed_int8_4w4c", ..., "default".
std::string_view to_string(MemoryLayout layout);
/// Inverse of to_string (case-insensitive); nullopt for an unknown name.
std::optional<StorageType> storage_type_from_string(std::string_view name);
std::optional<MemoryLayout> memory_layout_from_string(std::string_view name);

/// One key/value pair of BackendDelegate.compile_specs.
struct CompileSpec {
  std::string key;
  std::vector<uint8_t> value;
  bool operator==(const CompileSpec&) const = default;
};

struct TextureLimits {
  uint32_t x = 0, y = 0, z = 0;
  bool operator==(const TextureLimits&) const = default;
};

/// Every field is optional: an unset field has no key in the spec list.
struct CompileOptions {
  std::optional<bool> small_texture_limits, skip_memory_planning, force_fp16, downcast_64_bit,
      require_dynamic_shapes, skip_tag_memory_metadata, skip_bool_tensors;
  std::optional<TextureLimits> texture_limits;
  std::optional<StorageType> storage_type_override;
  std::optional<MemoryLayout> memory_layout_override;
  /// Decoded keys we do not know, kept verbatim and re-encoded verbatim (last).
  std::vector<CompileSpec> unknown;

  bool operator==(const CompileOptions&) const = default;

  /// The spec list, in a fixed key order.
  std::vector<CompileSpec> to_specs() const;
  /// Throws SerializeError on a wrong value size, a bool byte other than 0/1,
  /// an unknown enum value, a partial texture_limits_x/y/z or a duplicate key.
  static CompileOptions from_specs(std::span<const CompileSpec> specs);
};

}  // namespace vkc::serializer
