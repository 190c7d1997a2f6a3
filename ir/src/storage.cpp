#include "vkc/ir/storage.h"

#include <array>

namespace vkc::ir {
namespace {
constexpr std::array<std::string_view, 3> kStorage{"buffer", "texture3d", "texture2d"};
constexpr std::array<std::string_view, 10> kLayout{"width_packed",     "height_packed",    "channels_packed",
                                                   "packed_int8_4w4c", "packed_int8_4h4w", "packed_int8_4w",
                                                   "packed_int8_4c",   "",                 "packed_int8_4c1w",
                                                   "packed_int8_conv2d"};
}  // namespace

std::string_view storage_name(Storage s) { return kStorage[static_cast<size_t>(s)]; }
std::string_view layout_name(Layout l) {
  const auto i = static_cast<size_t>(l);
  return i < kLayout.size() && !kLayout[i].empty() ? kLayout[i] : "unknown";
}

std::optional<Storage> storage_from_name(std::string_view n) {
  for (size_t i = 0; i < kStorage.size(); ++i)
    if (kStorage[i] == n) return static_cast<Storage>(i);
  return std::nullopt;
}

std::optional<Layout> layout_from_name(std::string_view n) {
  for (size_t i = 0; i < kLayout.size(); ++i)
    if (!kLayout[i].empty() && kLayout[i] == n) return static_cast<Layout>(i);
  return std::nullopt;
}

std::optional<TensorRep> RepSet::preferred() const {
  for (Storage s : {Storage::Texture3D, Storage::Buffer, Storage::Texture2D})
    for (Layout l : {Layout::ChannelsPacked, Layout::WidthPacked, Layout::HeightPacked})
      if (contains({s, l})) return TensorRep{s, l};
  return std::nullopt;
}

}  // namespace vkc::ir
