// Sample graphs and programs shared by the serializer tests.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "vkc/serializer/program.h"
#include "vkc/serializer/vk_payload.h"

namespace vkc::serializer::samples {

/// A VkGraph holding every value kind and every graph field.
inline VkGraph sample_vk_graph() {
  VkGraph g;
  g.version = "0";
  g.values = {
      VkNull{},
      int64_t{-5000000000},
      3.25,
      true,
      VkTensor{VkDataType::Float16, {1, 3, 8, 8}, 0, -1, StorageType::Texture3D, MemoryLayout::ChannelsPacked,
               VkDataType::Float32},
      VkTensor{VkDataType::Int64, {4}, -1, 2, StorageType::Buffer, MemoryLayout::PackedInt8_Conv2d,
               VkDataType::Unset},
      VkIntList{{1, -2, std::numeric_limits<int64_t>::max()}},
      VkDoubleList{{0.5, -1e300}},
      VkBoolList{{true, false, true}},
      VkValueList{{4, 5}},
      std::string("nearest"),
      VkSymInt{7},
  };
  g.chain = {{17, "aten.add.Tensor", {4, 5, 2, 4}}, {18, "et_vk.prepack.default", {5, 4}}};
  g.input_ids = {4};
  g.output_ids = {5, 11};
  g.constants = {{std::numeric_limits<uint64_t>::max(), 384, std::string(64, 'a')}, {0, 16, ""}};
  g.shaders = {{16, 4, ""}};
  g.storage_type_override = StorageType::Texture2D;
  g.memory_layout_override = MemoryLayout::WidthPacked;
  return g;
}

inline ir::TensorData bytes_of(std::vector<uint8_t> bytes) { return ir::TensorData::owned(std::move(bytes)); }

inline std::vector<uint8_t> iota_bytes(size_t n, uint8_t start) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = uint8_t(start + i);
  return v;
}

/// Two plans, two distinct delegate payloads (one reused by the second plan),
/// constants of awkward sizes, named data with a repeated key, every value
/// and instruction kind.
inline Program sample_program() {
  VkGraph second = sample_vk_graph();
  second.chain.pop_back();
  const std::vector<uint8_t> payload_a = write_vk_payload(sample_vk_graph(), iota_bytes(20, 1));
  const std::vector<uint8_t> payload_b = write_vk_payload(second);

  ExecutionPlan forward;
  forward.name = "forward";
  forward.values = {
      EtTensor{ScalarType::Float, {1, 3, 8, 8}, {}, 0, AllocationInfo{1, 0}, ShapeDynamism::Static},
      EtTensor{ScalarType::Half, {2, 4}, {1, 0}, 0, AllocationInfo{1, (uint64_t{3} << 32) | 64},
               ShapeDynamism::DynamicBound},
      EtTensor{ScalarType::Byte, {5}, {0}, 1, std::nullopt, ShapeDynamism::Static},
      EtTensor{ScalarType::Float, {4}, {0}, 2, std::nullopt, ShapeDynamism::Static},
      EtTensor{ScalarType::Char, {33}, {0}, 3, std::nullopt, ShapeDynamism::Static},
      EtNull{},
      int64_t{-7},
      true,
      2.5,
      std::string("mode"),
      EtIntList{{1, 2, 3}},
      EtDoubleList{{0.25}},
      EtBoolList{{false, true}},
      EtTensorList{{0, 1}},
      EtOptionalTensorList{{0, -1}},
      EtTensor{ScalarType::Long, {}, {}, 0, std::nullopt, ShapeDynamism::Static},
  };
  forward.inputs = {0};
  forward.outputs = {1};
  forward.instructions = {DelegateCall{0, {0, 1}}, DelegateCall{1, {0, 1}}, KernelCall{0, {1, 6, 1}},
                          MoveCall{1, 15}, JumpFalseCall{7, 0}, FreeCall{15}};
  forward.operators = {{"aten::add", "out"}};
  const std::vector<CompileSpec> specs = {{"force_fp16", {1}}, {"storage_type_override", {1, 0, 0, 0}}};
  forward.delegates = {{"VulkanBackend", bytes_of(payload_a), specs}, {"VulkanBackend", bytes_of(payload_b), {}}};
  forward.non_const_buffer_sizes = {0, 1024};

  ExecutionPlan other;
  other.name = "other";
  other.values = {EtTensor{ScalarType::Float, {2}, {}, 0, std::nullopt, ShapeDynamism::Static}};
  other.inputs = {0};
  other.outputs = {0};
  other.instructions = {DelegateCall{0, {0, 0}}};
  other.delegates = {{"VulkanBackend", bytes_of(payload_a), {}}};  // same bytes as forward's first

  Program p;
  p.plans = {forward, other};
  p.constants = {bytes_of(iota_bytes(5, 10)), bytes_of(iota_bytes(16, 20)), bytes_of(iota_bytes(33, 40))};
  p.named_data = {{"w0", bytes_of(iota_bytes(300, 0))},
                  {"w1", bytes_of(iota_bytes(7, 100))},
                  {"w0", bytes_of(iota_bytes(300, 0))}};  // repeated key, same bytes
  return p;
}

}  // namespace vkc::serializer::samples
