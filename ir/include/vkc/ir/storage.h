// How a tensor is represented on the GPU. Numeric values are those of the
// VkGraph schema (vk_graph.fbs); the serializer static_asserts that they agree.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace vkc::ir {

enum class Storage : uint8_t { Buffer = 0, Texture3D = 1, Texture2D = 2 };
enum class Layout : uint8_t {
  WidthPacked = 0,
  HeightPacked = 1,
  ChannelsPacked = 2,
  // Int8 activations of the static-int8 (q8ta) operators: 4 int8 per int32 in a buffer, in blocks
  // (ET-VK's kInt8x4). Never in a RepSet: tag_storage places them by OpDef::int8_layout.
  PackedInt8_4W4C = 3,
  PackedInt8_4H4W = 4,
  PackedInt8_4W = 5,
  PackedInt8_4C = 6,
  PackedInt8_4C1W = 8,
  PackedInt8_Conv2d = 9,
};

constexpr bool is_packed_int8(Layout l) { return static_cast<uint8_t>(l) >= 3; }

std::string_view storage_name(Storage s);   // "buffer", "texture3d", "texture2d"
std::string_view layout_name(Layout l);     // "width_packed", ...
std::optional<Storage> storage_from_name(std::string_view);
std::optional<Layout> layout_from_name(std::string_view);

/// A (storage, layout) pair: one GPU representation of a tensor.
struct TensorRep {
  Storage storage = Storage::Texture3D;
  Layout layout = Layout::ChannelsPacked;
  bool operator==(const TensorRep&) const = default;
};

/// A set of representations, as a bitmask over the 9 (storage, layout) pairs.
class RepSet {
 public:
  constexpr RepSet() = default;
  static constexpr RepSet of(Storage s, Layout l) { return RepSet(bit(s, l)); }
  static constexpr RepSet all() { return RepSet(0x1ff); }
  static constexpr RepSet any_texture3d() {
    return of(Storage::Texture3D, Layout::WidthPacked) | of(Storage::Texture3D, Layout::HeightPacked) |
           of(Storage::Texture3D, Layout::ChannelsPacked);
  }
  static constexpr RepSet any_buffer() {
    return of(Storage::Buffer, Layout::WidthPacked) | of(Storage::Buffer, Layout::HeightPacked) |
           of(Storage::Buffer, Layout::ChannelsPacked);
  }
  constexpr RepSet operator|(RepSet o) const { return RepSet(bits_ | o.bits_); }
  constexpr RepSet operator&(RepSet o) const { return RepSet(bits_ & o.bits_); }
  constexpr bool empty() const { return bits_ == 0; }
  constexpr bool contains(TensorRep r) const { return !is_packed_int8(r.layout) && (bits_ & bit(r.storage, r.layout)); }
  /// Texture3D before Buffer before Texture2D; within one storage, channels, width, height.
  std::optional<TensorRep> preferred() const;
  constexpr uint16_t bits() const { return bits_; }

 private:
  constexpr explicit RepSet(uint16_t b) : bits_(b) {}
  static constexpr uint16_t bit(Storage s, Layout l) {
    return static_cast<uint16_t>(1u << (static_cast<unsigned>(s) * 3 + static_cast<unsigned>(l)));
  }
  uint16_t bits_ = 0;
};

}  // namespace vkc::ir
