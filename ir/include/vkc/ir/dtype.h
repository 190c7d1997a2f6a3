// Element types of IR tensors.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace vkc::ir {

enum class DType : uint8_t {
  Undefined,
  Bool,
  UInt8,
  Int8,
  UInt16,
  Int16,
  UInt32,
  Int32,
  UInt64,
  Int64,
  Float16,
  BFloat16,
  Float32,
  Float64,
  String,
};

/// Short name used in the textual IR and in reports: "f32", "i64", "bool", ...
std::string_view dtype_name(DType t);
/// Parses a name produced by dtype_name().
std::optional<DType> dtype_from_name(std::string_view name);
/// Bytes per element; 0 for Undefined and String.
size_t dtype_size(DType t);
bool is_float(DType t);
bool is_integer(DType t);  // signed or unsigned integer (not bool)

}  // namespace vkc::ir
