// Element types of IR tensors.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
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
/// The dtype of an ONNX TensorProto.DataType code (as in Cast's `to`); nullopt for codes vkc does not hold.
std::optional<DType> dtype_from_onnx(int64_t code);
/// The ONNX TensorProto.DataType code of a dtype (0, UNDEFINED, for Undefined).
int64_t dtype_to_onnx(DType t);

/// A set of dtypes (bitmask).
class DTypeSet {
 public:
  constexpr DTypeSet() = default;
  constexpr DTypeSet(std::initializer_list<DType> types) {
    for (DType t : types) bits_ |= bit(t);
  }
  constexpr DTypeSet operator|(DTypeSet o) const { return DTypeSet(bits_ | o.bits_); }
  constexpr bool contains(DType t) const { return bits_ & bit(t); }
  constexpr bool empty() const { return bits_ == 0; }
  /// "f16, f32"
  std::string str() const;

 private:
  constexpr explicit DTypeSet(uint32_t b) : bits_(b) {}
  static constexpr uint32_t bit(DType t) { return 1u << static_cast<unsigned>(t); }
  uint32_t bits_ = 0;
};
bool is_integer(DType t);  // signed or unsigned integer (not bool)

}  // namespace vkc::ir
