#include "onnx_tensor.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <onnx/onnx_pb.h>

#include <bit>
#include <cstring>
#include <string>
#include <vector>

#include "external_data.h"
#include "vkc/compiler/onnx_importer.h"

namespace vkc::compiler::detail {

// Typed fields are converted with memcpy, which yields little-endian bytes only on such hosts.
static_assert(std::endian::native == std::endian::little, "vkc assumes a little-endian host");

using ir::DType;

ir::TensorType tensor_type_from_onnx(const onnx::TypeProto& type) {
  if (!type.has_tensor_type()) return {};
  const auto& tensor = type.tensor_type();
  auto dtype = ir::dtype_from_onnx(tensor.elem_type());
  if (!dtype || !tensor.has_shape()) return {};
  std::vector<ir::Dim> dims;
  uint64_t numel = 1;  // of the known dims: a claim past 2^62 elements cannot be a real tensor
  std::vector<std::string> text;
  for (const auto& d : tensor.shape().dim())
    text.push_back(d.has_dim_value() ? std::to_string(d.dim_value()) : d.has_dim_param() ? d.dim_param() : "?");
  for (const auto& d : tensor.shape().dim()) {
    // A negative dim is read as unknown (some converters write -1 for it), as onnxruntime does.
    if (!d.has_dim_value() || d.dim_value() < 0) continue;
    if (__builtin_mul_overflow(numel, static_cast<uint64_t>(d.dim_value()), &numel) || numel > (uint64_t{1} << 62))
      throw ImportError(fmt::format("a tensor type [{}] claims more than 2^62 elements", fmt::join(text, ",")));
  }
  for (const auto& d : tensor.shape().dim()) {
    if (d.has_dim_value() && d.dim_value() >= 0)
      dims.push_back(ir::Dim::of(d.dim_value()));
    else if (d.has_dim_param())
      dims.push_back(ir::Dim::sym(d.dim_param()));
    else
      dims.push_back(ir::Dim{});
  }
  return {*dtype, ir::Shape(std::move(dims))};
}

namespace {

/// Each value's low `width` bytes (booleans normalized to 0/1).
template <typename Field>
std::vector<uint8_t> pack_integers(const Field& values, size_t width, bool as_bool) {
  std::vector<uint8_t> out(static_cast<size_t>(values.size()) * width);
  for (int i = 0; i < values.size(); ++i) {
    uint64_t v = as_bool ? uint64_t{values.Get(i) != 0} : static_cast<uint64_t>(values.Get(i));
    std::memcpy(out.data() + static_cast<size_t>(i) * width, &v, width);
  }
  return out;
}

/// The values' bytes as stored in memory (little-endian on the hosts vkc supports).
template <typename Field>
std::vector<uint8_t> copy_values(const Field& values) {
  std::vector<uint8_t> out(static_cast<size_t>(values.size()) * sizeof(typename Field::value_type));
  if (!out.empty()) std::memcpy(out.data(), values.data(), out.size());
  return out;
}

/// Bytes of a tensor stored in the typed repeated fields. Which field holds which
/// type follows onnx.proto: int32_data also carries 8/16-bit integers, bool and the bit
/// patterns of float16/bfloat16; uint64_data carries uint32 and uint64.
std::vector<uint8_t> typed_bytes(const onnx::TensorProto& t, DType dtype, uint64_t numel, std::string_view what) {
  auto expect = [&](int count, std::string_view field) {
    if (static_cast<uint64_t>(count) != numel)
      throw ImportError(fmt::format("{}: {} holds {} values but its shape needs {}", what, field, count, numel));
  };
  switch (dtype) {
    case DType::Float32: expect(t.float_data_size(), "float_data"); return copy_values(t.float_data());
    case DType::Float64: expect(t.double_data_size(), "double_data"); return copy_values(t.double_data());
    case DType::Int64: expect(t.int64_data_size(), "int64_data"); return copy_values(t.int64_data());
    case DType::UInt32:
    case DType::UInt64:
      expect(t.uint64_data_size(), "uint64_data");
      return pack_integers(t.uint64_data(), ir::dtype_size(dtype), false);
    default:
      expect(t.int32_data_size(), "int32_data");
      return pack_integers(t.int32_data(), ir::dtype_size(dtype), dtype == DType::Bool);
  }
}

}  // namespace

ir::TensorAttr TensorReader::read(const onnx::TensorProto& t, std::string_view what) const {
  auto dtype = ir::dtype_from_onnx(t.data_type());
  if (!dtype)
    throw ImportError(
        fmt::format("{}: unsupported element type {}", what,
                    onnx::TensorProto_DataType_Name(static_cast<onnx::TensorProto_DataType>(t.data_type()))));
  if (*dtype == DType::String) throw ImportError(fmt::format("{}: string tensors are not supported", what));

  uint64_t numel = 1;
  for (int64_t d : t.dims()) {
    if (d < 0) throw ImportError(fmt::format("{}: negative dimension {}", what, d));
    if (__builtin_mul_overflow(numel, static_cast<uint64_t>(d), &numel))
      throw ImportError(fmt::format("{}: element count overflows", what));
  }
  uint64_t nbytes = 0;
  if (__builtin_mul_overflow(numel, static_cast<uint64_t>(ir::dtype_size(*dtype)), &nbytes))
    throw ImportError(fmt::format("{}: byte size overflows", what));

  ir::TensorAttr out;
  out.type = ir::TensorType{*dtype, ir::Shape::of(std::vector<int64_t>(t.dims().begin(), t.dims().end()))};
  if (t.data_location() == onnx::TensorProto_DataLocation_EXTERNAL) {
    out.data = external_.load(t, nbytes, ir::dtype_size(*dtype), what);
  } else if (t.has_raw_data()) {
    const std::string& raw = t.raw_data();
    if (raw.size() != nbytes)
      throw ImportError(
          fmt::format("{}: raw_data has {} bytes but its type and shape need {}", what, raw.size(), nbytes));
    out.data = ir::TensorData::view(model_, reinterpret_cast<const uint8_t*>(raw.data()), raw.size());
  } else {
    out.data = ir::TensorData::owned(typed_bytes(t, *dtype, numel, what));
  }
  return out;
}

}  // namespace vkc::compiler::detail
