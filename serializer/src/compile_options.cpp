#include "vkc/serializer/compile_options.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <array>
#include <set>
#include <utility>

#include "le_bytes.h"
#include "vkc/serializer/errors.h"

namespace vkc::serializer {
namespace {

using detail::get_le;
using detail::put_le;

constexpr std::array<std::pair<StorageType, std::string_view>, 4> kStorageNames{{
    {StorageType::Buffer, "buffer"},
    {StorageType::Texture3D, "texture3d"},
    {StorageType::Texture2D, "texture2d"},
    {StorageType::Default, "default"},
}};

constexpr std::array<std::pair<MemoryLayout, std::string_view>, 10> kLayoutNames{{
    {MemoryLayout::WidthPacked, "width_packed"},
    {MemoryLayout::HeightPacked, "height_packed"},
    {MemoryLayout::ChannelsPacked, "channels_packed"},
    {MemoryLayout::PackedInt8_4W4C, "packed_int8_4w4c"},
    {MemoryLayout::PackedInt8_4H4W, "packed_int8_4h4w"},
    {MemoryLayout::PackedInt8_4W, "packed_int8_4w"},
    {MemoryLayout::PackedInt8_4C, "packed_int8_4c"},
    {MemoryLayout::PackedInt8_4C1W, "packed_int8_4c1w"},
    {MemoryLayout::PackedInt8_Conv2d, "packed_int8_conv2d"},
    {MemoryLayout::Default, "default"},
}};

// Bool options in the order to_specs() emits them.
constexpr std::array<std::pair<std::string_view, std::optional<bool> CompileOptions::*>, 7> kBoolKeys{{
    {"small_texture_limits", &CompileOptions::small_texture_limits},
    {"skip_memory_planning", &CompileOptions::skip_memory_planning},
    {"force_fp16", &CompileOptions::force_fp16},
    {"downcast_64_bit", &CompileOptions::downcast_64_bit},
    {"require_dynamic_shapes", &CompileOptions::require_dynamic_shapes},
    {"skip_tag_memory_metadata", &CompileOptions::skip_tag_memory_metadata},
    {"skip_bool_tensors", &CompileOptions::skip_bool_tensors},
}};

constexpr std::string_view kStorageKey = "storage_type_override";
constexpr std::string_view kLayoutKey = "memory_layout_override";
constexpr std::array<std::string_view, 3> kLimitKeys{"texture_limits_x", "texture_limits_y",
                                                     "texture_limits_z"};

bool iequals(std::string_view a, std::string_view b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](char x, char y) {
    return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
  });
}

template <typename Enum, size_t N>
std::string_view name_of(const std::array<std::pair<Enum, std::string_view>, N>& names, Enum value) {
  for (const auto& [v, name] : names)
    if (v == value) return name;
  return "unknown";
}

template <typename Enum, size_t N>
std::optional<Enum> parse_name(const std::array<std::pair<Enum, std::string_view>, N>& names,
                               std::string_view text) {
  for (const auto& [v, name] : names)
    if (iequals(name, text)) return v;
  return std::nullopt;
}

CompileSpec u32_spec(std::string_view key, uint32_t value) {
  CompileSpec spec{std::string(key), {}};
  put_le<uint32_t>(spec.value, value);
  return spec;
}

void expect_size(const CompileSpec& spec, size_t size) {
  if (spec.value.size() != size)
    throw SerializeError(fmt::format("compile spec '{}' must be {} byte(s), got {}", spec.key, size,
                                     spec.value.size()));
}

uint32_t decode_u32(const CompileSpec& spec) {
  expect_size(spec, 4);
  return get_le<uint32_t>(spec.value.data());
}

template <typename Enum, size_t N>
Enum decode_enum(const CompileSpec& spec, const std::array<std::pair<Enum, std::string_view>, N>& names) {
  uint32_t raw = decode_u32(spec);
  for (const auto& [v, name] : names)
    if (static_cast<uint32_t>(v) == raw) return v;
  throw SerializeError(fmt::format("compile spec '{}' has unknown value {}", spec.key, raw));
}

bool decode_bool(const CompileSpec& spec) {
  expect_size(spec, 1);
  if (spec.value[0] > 1)
    throw SerializeError(
        fmt::format("compile spec '{}' must be 0 or 1, got {}", spec.key, spec.value[0]));
  return spec.value[0] == 1;
}

}  // namespace

std::string_view to_string(StorageType type) { return name_of(kStorageNames, type); }
std::string_view to_string(MemoryLayout layout) { return name_of(kLayoutNames, layout); }

std::optional<StorageType> storage_type_from_string(std::string_view name) {
  return parse_name(kStorageNames, name);
}
std::optional<MemoryLayout> memory_layout_from_string(std::string_view name) {
  return parse_name(kLayoutNames, name);
}

std::vector<CompileSpec> CompileOptions::to_specs() const {
  std::vector<CompileSpec> specs;
  if (storage_type_override) specs.push_back(u32_spec(kStorageKey, uint32_t(*storage_type_override)));
  if (memory_layout_override) specs.push_back(u32_spec(kLayoutKey, uint32_t(*memory_layout_override)));
  if (texture_limits) {
    specs.push_back(u32_spec(kLimitKeys[0], texture_limits->x));
    specs.push_back(u32_spec(kLimitKeys[1], texture_limits->y));
    specs.push_back(u32_spec(kLimitKeys[2], texture_limits->z));
  }
  for (const auto& [key, field] : kBoolKeys)
    if (const std::optional<bool>& value = this->*field)
      specs.push_back({std::string(key), {static_cast<uint8_t>(*value ? 1 : 0)}});
  specs.insert(specs.end(), unknown.begin(), unknown.end());
  return specs;
}

CompileOptions CompileOptions::from_specs(std::span<const CompileSpec> specs) {
  CompileOptions options;
  std::set<std::string_view> seen;
  std::array<std::optional<uint32_t>, 3> limits;
  for (const CompileSpec& spec : specs) {
    if (!seen.insert(spec.key).second)
      throw SerializeError(fmt::format("compile spec '{}' appears more than once", spec.key));
    if (spec.key == kStorageKey) {
      options.storage_type_override = decode_enum(spec, kStorageNames);
      continue;
    }
    if (spec.key == kLayoutKey) {
      options.memory_layout_override = decode_enum(spec, kLayoutNames);
      continue;
    }
    auto limit = std::find(kLimitKeys.begin(), kLimitKeys.end(), spec.key);
    if (limit != kLimitKeys.end()) {
      limits[limit - kLimitKeys.begin()] = decode_u32(spec);
      continue;
    }
    auto flag = std::find_if(kBoolKeys.begin(), kBoolKeys.end(),
                             [&](const auto& entry) { return entry.first == spec.key; });
    if (flag != kBoolKeys.end()) {
      options.*(flag->second) = decode_bool(spec);
      continue;
    }
    options.unknown.push_back(spec);
  }
  const size_t limits_set = std::count_if(limits.begin(), limits.end(), [](auto& l) { return l.has_value(); });
  if (limits_set == 3) {
    options.texture_limits = TextureLimits{*limits[0], *limits[1], *limits[2]};
  } else if (limits_set > 0) {
    for (size_t i = 0; i < 3; ++i)
      if (!limits[i])
        throw SerializeError(fmt::format(
            "compile spec '{}' is missing; texture_limits_x/y/z must be given together", kLimitKeys[i]));
  }
  return options;
}

}  // namespace vkc::serializer
