#include "vkc/ir/dtype.h"

#include <array>
#include <utility>

namespace vkc::ir {
namespace {
struct Info {
  DType type;
  std::string_view name;
  size_t size;
};
constexpr std::array<Info, 15> kInfo{{
    {DType::Undefined, "undef", 0},
    {DType::Bool, "bool", 1},
    {DType::UInt8, "u8", 1},
    {DType::Int8, "i8", 1},
    {DType::UInt16, "u16", 2},
    {DType::Int16, "i16", 2},
    {DType::UInt32, "u32", 4},
    {DType::Int32, "i32", 4},
    {DType::UInt64, "u64", 8},
    {DType::Int64, "i64", 8},
    {DType::Float16, "f16", 2},
    {DType::BFloat16, "bf16", 2},
    {DType::Float32, "f32", 4},
    {DType::Float64, "f64", 8},
    {DType::String, "string", 0},
}};
}  // namespace

std::string_view dtype_name(DType t) { return kInfo[static_cast<size_t>(t)].name; }

std::optional<DType> dtype_from_name(std::string_view name) {
  for (const auto& i : kInfo)
    if (i.name == name) return i.type;
  return std::nullopt;
}

size_t dtype_size(DType t) { return kInfo[static_cast<size_t>(t)].size; }

std::optional<DType> dtype_from_onnx(int64_t code) {
  switch (code) {  // onnx.proto TensorProto.DataType
    case 1: return DType::Float32;
    case 2: return DType::UInt8;
    case 3: return DType::Int8;
    case 4: return DType::UInt16;
    case 5: return DType::Int16;
    case 6: return DType::Int32;
    case 7: return DType::Int64;
    case 8: return DType::String;
    case 9: return DType::Bool;
    case 10: return DType::Float16;
    case 11: return DType::Float64;
    case 12: return DType::UInt32;
    case 13: return DType::UInt64;
    case 16: return DType::BFloat16;
    default: return std::nullopt;
  }
}

int64_t dtype_to_onnx(DType t) {
  for (int64_t code = 1; code <= 16; ++code)
    if (dtype_from_onnx(code) == t) return code;
  return 0;  // UNDEFINED
}

bool is_float(DType t) {
  return t == DType::Float16 || t == DType::BFloat16 || t == DType::Float32 || t == DType::Float64;
}

std::string DTypeSet::str() const {
  std::string s;
  for (const auto& i : kInfo)
    if (contains(i.type)) s += (s.empty() ? "" : ", ") + std::string(i.name);
  return s;
}

bool is_integer(DType t) {
  switch (t) {
    case DType::UInt8: case DType::Int8: case DType::UInt16: case DType::Int16:
    case DType::UInt32: case DType::Int32: case DType::UInt64: case DType::Int64:
      return true;
    default:
      return false;
  }
}

}  // namespace vkc::ir
