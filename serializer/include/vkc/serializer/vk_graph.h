// A plain C++ description of one ET-VK VkGraph (schema/vk_graph.fbs), free of
// flatbuffers types. vk_payload.h converts it to and from bytes.
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "vkc/serializer/compile_options.h"

namespace vkc::serializer {

enum class VkDataType : int8_t {
  Bool = 0, UInt8 = 1, Int8 = 2, Int32 = 3, Float16 = 4, Float32 = 5, Float64 = 6, Int64 = 7,
  Unset = 127,
};

struct VkTensor {
  VkDataType dtype = VkDataType::Float32;
  std::vector<uint32_t> dims;
  int32_t constant_id = -1;  // index into VkGraph::constants; < 0: not a constant
  int32_t mem_obj_id = -1;   // shared memory object; < 0: dedicated memory
  StorageType storage = StorageType::Default;
  MemoryLayout layout = MemoryLayout::Default;
  VkDataType staging = VkDataType::Unset;  // host type of I/O staging buffers
};

struct VkNull {};
struct VkSymInt { int32_t value = 0; };
struct VkIntList { std::vector<int64_t> items; };
struct VkDoubleList { std::vector<double> items; };
struct VkBoolList { std::vector<bool> items; };
struct VkValueList { std::vector<int32_t> items; };  // raw value ids

/// Alternative order = GraphTypes union order (tag = index + 1).
using VkValue = std::variant<VkNull, int64_t, double, bool, VkTensor, VkIntList, VkDoubleList,
                             VkBoolList, VkValueList, std::string, VkSymInt>;

struct VkOperatorCall {
  uint32_t node_id = 0;
  std::string name;
  std::vector<int32_t> args;
};

/// A range of the payload's bytes section, or with offset UINT64_MAX the
/// program named-data entry `named_key`.
struct VkBytes {
  uint64_t offset = 0;
  uint64_t length = 0;
  std::string named_key;
};

struct VkGraph {
  std::string version = "0";
  std::vector<VkOperatorCall> chain;
  std::vector<VkValue> values;
  std::vector<uint32_t> input_ids, output_ids;
  std::vector<VkBytes> constants, shaders;
  StorageType storage_type_override = StorageType::Default;
  MemoryLayout memory_layout_override = MemoryLayout::Default;
};

}  // namespace vkc::serializer
