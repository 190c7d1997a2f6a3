// VH00 header layout (little-endian, 30 bytes, padded to 32):
//   [0:4] zero  [4:8] "VH00"  [8:10] u16 header_size = 30
//   [10:14] u32 flatbuffer_offset  [14:18] u32 flatbuffer_size
//   [18:22] u32 bytes_offset       [22:30] u64 bytes_size
#include "vkc/serializer/vk_payload.h"

#include <fmt/format.h>

#include <cstring>
#include <limits>

#include "le_bytes.h"
#include "vk_graph_codec.h"
#include "vkc/serializer/errors.h"

namespace vkc::serializer {
namespace {

using detail::align_up;
using detail::get_le;
using detail::put_le;

constexpr size_t kHeaderSize = 30;
constexpr size_t kPaddedHeaderSize = 32;
constexpr size_t kSectionAlignment = 16;
constexpr char kMagic[4] = {'V', 'H', '0', '0'};

struct Header {
  uint64_t header_size, fb_offset, fb_size, bytes_offset, bytes_size;
};

[[noreturn]] void fail(const std::string& what) { throw SerializeError("corrupt Vulkan payload: " + what); }

// The same checks, in the same order, as the ET-VK runtime's header parser.
Header parse_header(std::span<const uint8_t> p) {
  if (p.size() < kHeaderSize)
    fail(fmt::format("{} bytes is shorter than the {}-byte VH00 header", p.size(), kHeaderSize));
  if (std::memcmp(p.data() + 4, kMagic, 4) != 0) fail("no VH00 magic at bytes [4:8]");
  Header h{get_le<uint16_t>(p.data() + 8), get_le<uint32_t>(p.data() + 10), get_le<uint32_t>(p.data() + 14),
           get_le<uint32_t>(p.data() + 18), get_le<uint64_t>(p.data() + 22)};
  if (h.header_size < kHeaderSize) fail(fmt::format("header_size {} < {}", h.header_size, kHeaderSize));
  if (h.fb_offset < h.header_size)
    fail(fmt::format("flatbuffer_offset {} < header_size {}", h.fb_offset, h.header_size));
  if (h.fb_size == 0) fail("flatbuffer_size is 0");
  if (h.bytes_offset < h.fb_offset + h.fb_size)
    fail(fmt::format("bytes_offset {} overlaps the flatbuffer [{}, +{}]", h.bytes_offset, h.fb_offset, h.fb_size));
  if (h.fb_offset > p.size() || h.fb_size > p.size() - h.fb_offset)
    fail(fmt::format("flatbuffer [offset {}, size {}] exceeds payload size {}", h.fb_offset, h.fb_size, p.size()));
  if (h.bytes_offset > p.size() || h.bytes_size > p.size() - h.bytes_offset)
    fail(fmt::format("bytes [offset {}, size {}] exceeds payload size {}", h.bytes_offset, h.bytes_size, p.size()));
  return h;
}

}  // namespace

std::vector<uint8_t> write_vk_payload(const VkGraph& graph, std::span<const uint8_t> bytes_section) {
  const std::vector<uint8_t> fb = detail::encode_vk_graph(graph);
  const uint64_t bytes_offset = kPaddedHeaderSize + align_up(fb.size(), kSectionAlignment);
  if (bytes_offset > std::numeric_limits<uint32_t>::max())
    throw SerializeError(fmt::format("VkGraph flatbuffer of {} bytes does not fit a VH00 header", fb.size()));

  std::vector<uint8_t> out;
  out.reserve(bytes_offset + align_up(bytes_section.size(), kSectionAlignment));
  put_le<uint32_t>(out, 0);
  out.insert(out.end(), kMagic, kMagic + 4);
  put_le<uint16_t>(out, kHeaderSize);
  put_le<uint32_t>(out, kPaddedHeaderSize);
  put_le<uint32_t>(out, fb.size());
  put_le<uint32_t>(out, bytes_offset);
  put_le<uint64_t>(out, bytes_section.size());
  out.resize(kPaddedHeaderSize, 0);
  out.insert(out.end(), fb.begin(), fb.end());
  out.resize(bytes_offset, 0);
  out.insert(out.end(), bytes_section.begin(), bytes_section.end());
  out.resize(align_up(out.size(), kSectionAlignment), 0);
  return out;
}

VkPayload read_vk_payload(std::span<const uint8_t> payload) {
  const Header h = parse_header(payload);
  // A bytes_size of 0 means "the rest of the payload", as in the runtime.
  const uint64_t bytes_size = h.bytes_size != 0 ? h.bytes_size : payload.size() - h.bytes_offset;
  std::span<const uint8_t> fb = payload.subspan(h.fb_offset, h.fb_size);
  // The verifier checks alignment relative to the buffer start; give it an
  // 8-aligned start so that the reads it approves are aligned too.
  std::vector<uint64_t> aligned_copy;
  if (reinterpret_cast<uintptr_t>(fb.data()) % alignof(uint64_t) != 0) {
    aligned_copy.resize(align_up(fb.size(), 8) / 8);
    std::memcpy(aligned_copy.data(), fb.data(), fb.size());
    fb = {reinterpret_cast<const uint8_t*>(aligned_copy.data()), fb.size()};
  }
  try {
    return {detail::decode_vk_graph(fb), payload.subspan(h.bytes_offset, bytes_size)};
  } catch (const SerializeError& e) {
    fail(e.what());
  }
}

}  // namespace vkc::serializer
