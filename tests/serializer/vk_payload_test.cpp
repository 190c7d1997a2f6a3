#include "vkc/serializer/vk_payload.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>

#include "sample_data.h"
#include "vkc/serializer/errors.h"

namespace vkc::serializer {
namespace {

using ::testing::HasSubstr;
using vkc::serializer::samples::iota_bytes;
using vkc::serializer::samples::sample_vk_graph;

uint64_t le(const std::vector<uint8_t>& b, size_t offset, size_t size) {
  uint64_t v = 0;
  for (size_t i = 0; i < size; ++i) v |= uint64_t(b[offset + i]) << (8 * i);
  return v;
}

void put32(std::vector<uint8_t>& b, size_t offset, uint32_t v) {
  for (size_t i = 0; i < 4; ++i) b.at(offset + i) = uint8_t(v >> (8 * i));
}

void expect_error(std::span<const uint8_t> payload, const std::string& fragment) {
  try {
    read_vk_payload(payload);
    ADD_FAILURE() << "no error; expected one containing '" << fragment << "'";
  } catch (const SerializeError& e) {
    EXPECT_THAT(e.what(), HasSubstr(fragment));
  }
}

TEST(VkPayload, RoundTripsEveryValueKind) {
  const VkGraph graph = sample_vk_graph();
  const std::vector<uint8_t> section = iota_bytes(21, 3);
  const std::vector<uint8_t> payload = write_vk_payload(graph, section);
  const VkPayload read = read_vk_payload(payload);
  EXPECT_EQ(std::vector<uint8_t>(read.bytes.begin(), read.bytes.end()), section);
  EXPECT_EQ(write_vk_payload(read.graph, read.bytes), payload);

  const VkGraph& g = read.graph;
  ASSERT_EQ(g.values.size(), graph.values.size());
  for (size_t i = 0; i < g.values.size(); ++i) EXPECT_EQ(g.values[i].index(), graph.values[i].index()) << i;
  EXPECT_EQ(std::get<int64_t>(g.values[1]), -5000000000);
  EXPECT_EQ(std::get<double>(g.values[2]), 3.25);
  EXPECT_EQ(std::get<bool>(g.values[3]), true);
  const auto& t = std::get<VkTensor>(g.values[4]);
  EXPECT_EQ(t.dtype, VkDataType::Float16);
  EXPECT_EQ(t.dims, (std::vector<uint32_t>{1, 3, 8, 8}));
  EXPECT_EQ(t.constant_id, 0);
  EXPECT_EQ(t.mem_obj_id, -1);
  EXPECT_EQ(t.storage, StorageType::Texture3D);
  EXPECT_EQ(t.layout, MemoryLayout::ChannelsPacked);
  EXPECT_EQ(t.staging, VkDataType::Float32);
  const auto& t2 = std::get<VkTensor>(g.values[5]);
  EXPECT_EQ(t2.dtype, VkDataType::Int64);
  EXPECT_EQ(t2.layout, MemoryLayout::PackedInt8_Conv2d);
  EXPECT_EQ(t2.staging, VkDataType::Unset);
  EXPECT_EQ(std::get<VkIntList>(g.values[6]).items, std::get<VkIntList>(graph.values[6]).items);
  EXPECT_EQ(std::get<VkDoubleList>(g.values[7]).items, (std::vector<double>{0.5, -1e300}));
  EXPECT_EQ(std::get<VkBoolList>(g.values[8]).items, (std::vector<bool>{true, false, true}));
  EXPECT_EQ(std::get<VkValueList>(g.values[9]).items, (std::vector<int32_t>{4, 5}));
  EXPECT_EQ(std::get<std::string>(g.values[10]), "nearest");
  EXPECT_EQ(std::get<VkSymInt>(g.values[11]).value, 7);
  ASSERT_EQ(g.chain.size(), 2u);
  EXPECT_EQ(g.chain[0].node_id, 17u);
  EXPECT_EQ(g.chain[0].name, "aten.add.Tensor");
  EXPECT_EQ(g.chain[0].args, (std::vector<int32_t>{4, 5, 2, 4}));
  EXPECT_EQ(g.input_ids, graph.input_ids);
  EXPECT_EQ(g.output_ids, graph.output_ids);
  ASSERT_EQ(g.constants.size(), 2u);
  EXPECT_EQ(g.constants[0].offset, UINT64_MAX);
  EXPECT_EQ(g.constants[0].length, 384u);
  EXPECT_EQ(g.constants[0].named_key, std::string(64, 'a'));
  EXPECT_EQ(g.constants[1].named_key, "");
  ASSERT_EQ(g.shaders.size(), 1u);
  EXPECT_EQ(g.shaders[0].offset, 16u);
  EXPECT_EQ(g.storage_type_override, StorageType::Texture2D);
  EXPECT_EQ(g.memory_layout_override, MemoryLayout::WidthPacked);
}

TEST(VkPayload, HeaderFields) {
  const std::vector<uint8_t> section = iota_bytes(5, 0);
  const std::vector<uint8_t> p = write_vk_payload(sample_vk_graph(), section);
  EXPECT_EQ(le(p, 0, 4), 0u);
  EXPECT_EQ(std::string(p.begin() + 4, p.begin() + 8), "VH00");
  EXPECT_EQ(le(p, 8, 2), 30u);
  EXPECT_EQ(le(p, 10, 4), 32u);
  const uint64_t fb_size = le(p, 14, 4);
  EXPECT_EQ(le(p, 18, 4), 32 + (fb_size + 15) / 16 * 16);
  EXPECT_EQ(le(p, 22, 8), 5u);
  EXPECT_EQ(le(p, 30, 2), 0u);  // header padding
  EXPECT_EQ(std::string(p.begin() + 36, p.begin() + 40), "VK00");
  EXPECT_EQ(p.size(), le(p, 18, 4) + 16);
  EXPECT_EQ(write_vk_payload(sample_vk_graph(), section), p);  // deterministic
}

TEST(VkPayload, EmptyBytesSizeMeansRestOfPayload) {
  std::vector<uint8_t> p = write_vk_payload(sample_vk_graph());
  EXPECT_EQ(read_vk_payload(p).bytes.size(), 0u);
  p.resize(p.size() + 48, 7);
  EXPECT_EQ(read_vk_payload(p).bytes.size(), 48u);
}

TEST(VkPayload, HeaderErrors) {
  const std::vector<uint8_t> good = write_vk_payload(sample_vk_graph(), iota_bytes(8, 0));
  auto patched = [&](size_t offset, uint32_t v) {
    std::vector<uint8_t> b = good;
    put32(b, offset, v);
    return b;
  };
  expect_error({}, "0 bytes is shorter than the 30-byte VH00 header");
  expect_error(std::span(good).first(29), "shorter than the 30-byte");
  expect_error(patched(4, 0x31304856), "no VH00 magic");  // "VH01"
  std::vector<uint8_t> small_header = good;
  small_header[8] = 29;
  expect_error(small_header, "header_size 29 < 30");
  expect_error(patched(10, 16), "flatbuffer_offset 16 < header_size 30");
  expect_error(patched(14, 0), "flatbuffer_size is 0");
  expect_error(patched(18, 40), "overlaps the flatbuffer");
  std::vector<uint8_t> big_fb = patched(14, 1u << 20);
  put32(big_fb, 18, 32 + (1u << 20));
  expect_error(big_fb, "flatbuffer [offset 32, size 1048576] exceeds payload size");
  std::vector<uint8_t> big_bytes = good;
  big_bytes[29] = 1;
  expect_error(big_bytes, "bytes [offset");
  std::vector<uint8_t> wrong_id = good;
  wrong_id[39] = '1';
  expect_error(wrong_id, "identifier 'VK01' is not 'VK00'");
  std::vector<uint8_t> garbage = good;
  put32(garbage, 32, 0xfffffff0);  // root offset far outside the flatbuffer
  expect_error(garbage, "flatbuffer verification failed");
}

TEST(VkPayload, TruncationIsAnErrorUntilTheBytesEnd) {
  const std::vector<uint8_t> good = write_vk_payload(sample_vk_graph(), iota_bytes(8, 0));
  const size_t needed = le(good, 18, 4) + 8;
  for (size_t n = 0; n < good.size(); ++n) {
    if (n < needed)
      EXPECT_THROW(read_vk_payload(std::span(good).first(n)), SerializeError) << n;
    else
      EXPECT_NO_THROW(read_vk_payload(std::span(good).first(n))) << n;
  }
}

TEST(VkPayload, FlippedBytesNeverCrash) {
  const std::vector<uint8_t> good = write_vk_payload(sample_vk_graph(), iota_bytes(8, 0));
  for (size_t i = 0; i < good.size(); ++i) {
    for (uint8_t mask : {uint8_t{0x01}, uint8_t{0x80}, uint8_t{0xff}}) {
      std::vector<uint8_t> b = good;
      b[i] ^= mask;
      try {
        read_vk_payload(b);
      } catch (const SerializeError&) {
      }
    }
  }
}

TEST(VkPayload, UnalignedInputIsRead) {
  const std::vector<uint8_t> good = write_vk_payload(sample_vk_graph());
  std::vector<uint8_t> shifted(good.size() + 1);
  std::memcpy(shifted.data() + 1, good.data(), good.size());
  EXPECT_EQ(read_vk_payload(std::span(shifted).subspan(1)).graph.values.size(), sample_vk_graph().values.size());
}

}  // namespace
}  // namespace vkc::serializer
