// GPU dtypes of VkTensors as host dtypes.
#pragma once

#include <fmt/format.h>

#include "vkc/ir/dtype.h"
#include "vkc/runtime/backend.h"
#include "vkc/serializer/vk_graph.h"

namespace vkc::runtime::cpu {

inline ir::DType gpu_dtype(serializer::VkDataType t) {
  using V = serializer::VkDataType;
  switch (t) {
    case V::Bool: return ir::DType::Bool;
    case V::UInt8: return ir::DType::UInt8;
    case V::Int8: return ir::DType::Int8;
    case V::Int32: return ir::DType::Int32;
    case V::Float16: return ir::DType::Float16;
    case V::Float32: return ir::DType::Float32;
    case V::Float64: return ir::DType::Float64;
    case V::Int64: return ir::DType::Int64;
    default: break;
  }
  throw RuntimeError(fmt::format("VkDataType {} is not supported", static_cast<int>(t)));
}

}  // namespace vkc::runtime::cpu
