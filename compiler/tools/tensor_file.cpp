#include "tensor_file.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <onnx/onnx_pb.h>

#include <fstream>
#include <iterator>
#include <stdexcept>
#include <cstdint>
#include <cstring>

namespace vkc::tools {
namespace {

std::vector<uint8_t> read_bytes(const std::filesystem::path& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error(fmt::format("cannot open {}", path.string()));
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

template <typename Field>
void fill(kernels::HostTensor& out, const Field& values, bool as_float, const char* field) {
  if (values.size() != out.numel())
    throw std::runtime_error(fmt::format("{} has {} values for {} elements", field, values.size(), out.numel()));
  for (int64_t i = 0; i < out.numel(); ++i) {
    if (as_float) out.set_f(i, static_cast<double>(values.Get(static_cast<int>(i))));
    else out.set_i(i, static_cast<int64_t>(values.Get(static_cast<int>(i))));
  }
}

}  // namespace

kernels::HostTensor tensor_from_proto(const onnx::TensorProto& t) {
  const auto dtype = ir::dtype_from_onnx(t.data_type());
  if (!dtype || *dtype == ir::DType::String)
    throw std::runtime_error(fmt::format("tensor '{}': data type {} is not supported", t.name(), t.data_type()));
  if (t.data_location() == onnx::TensorProto_DataLocation_EXTERNAL)
    throw std::runtime_error(fmt::format("tensor '{}': external data is not supported", t.name()));
  std::vector<int64_t> dims(t.dims().begin(), t.dims().end());
  // The claimed size is checked against the bytes or values present before anything is allocated.
  uint64_t numel = 1;
  for (int64_t d : dims) {
    if (d < 0) throw std::runtime_error(fmt::format("tensor '{}': negative dim {}", t.name(), d));
    if (d != 0 && numel > (uint64_t{1} << 40) / static_cast<uint64_t>(d))
      throw std::runtime_error(fmt::format("tensor '{}': dims {} claim more than 2^40 elements", t.name(), fmt::join(dims, "x")));
    numel *= static_cast<uint64_t>(d);
  }
  const uint64_t present = t.has_raw_data() ? t.raw_data().size() / ir::dtype_size(*dtype)
                                            : static_cast<uint64_t>(t.float_data_size() + t.double_data_size() +
                                                                    t.int64_data_size() + t.uint64_data_size() +
                                                                    t.int32_data_size());
  if (present < numel)
    throw std::runtime_error(fmt::format("tensor '{}': dims {} need {} elements, the data holds {}", t.name(),
                                         fmt::join(dims, "x"), numel, present));
  kernels::HostTensor out = kernels::HostTensor::zeros(*dtype, dims);
  const size_t bytes = static_cast<size_t>(out.numel()) * ir::dtype_size(*dtype);
  if (t.has_raw_data()) {
    if (t.raw_data().size() != bytes)
      throw std::runtime_error(fmt::format("tensor '{}': {} raw bytes for {} elements of {}", t.name(),
                                           t.raw_data().size(), out.numel(), ir::dtype_name(*dtype)));
    if (bytes) std::memcpy(out.mutable_bytes(), t.raw_data().data(), bytes);
    return out;
  }
  switch (*dtype) {
    case ir::DType::Float32: fill(out, t.float_data(), true, "float_data"); break;
    case ir::DType::Float64: fill(out, t.double_data(), true, "double_data"); break;
    case ir::DType::Int64: fill(out, t.int64_data(), false, "int64_data"); break;
    case ir::DType::UInt32: case ir::DType::UInt64: fill(out, t.uint64_data(), false, "uint64_data"); break;
    case ir::DType::Float16: case ir::DType::BFloat16: {  // int32_data holds the bit patterns
      if (t.int32_data_size() != out.numel()) throw std::runtime_error("int32_data does not match the dims");
      for (int64_t i = 0; i < out.numel(); ++i) {
        const uint16_t bits = static_cast<uint16_t>(t.int32_data(static_cast<int>(i)));
        std::memcpy(out.mutable_bytes() + 2 * i, &bits, 2);
      }
      break;
    }
    default: fill(out, t.int32_data(), false, "int32_data"); break;
  }
  return out;
}

kernels::HostTensor tensor_from_pb_bytes(std::span<const uint8_t> bytes, std::string* name) {
  onnx::TensorProto t;
  if (bytes.size() > static_cast<size_t>(INT32_MAX) || !t.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
    throw std::runtime_error("not a serialized ONNX TensorProto");
  if (name) *name = t.name();
  return tensor_from_proto(t);
}

kernels::HostTensor read_tensor_pb(const std::filesystem::path& path, std::string* name) {
  const std::vector<uint8_t> bytes = read_bytes(path);
  try {
    return tensor_from_pb_bytes(bytes, name);
  } catch (const std::exception& e) {
    throw std::runtime_error(fmt::format("{}: {}", path.string(), e.what()));
  }
}

kernels::HostTensor tensor_from_bin_bytes(std::vector<uint8_t> bytes, ir::DType dtype, std::vector<int64_t> shape) {
  uint64_t want = ir::dtype_size(dtype);  // UINT64_MAX: a negative dim, or more than 64 bits of bytes
  for (int64_t d : shape)
    if (d < 0 || __builtin_mul_overflow(want, static_cast<uint64_t>(d), &want)) want = UINT64_MAX;
  if (bytes.size() != want)
    throw std::runtime_error(fmt::format("{} bytes, but {} [{}] needs {}", bytes.size(), ir::dtype_name(dtype),
                                         fmt::join(shape, ","), want == UINT64_MAX ? std::string("more") : std::to_string(want)));
  return {dtype, std::move(shape), ir::TensorData::owned(std::move(bytes))};
}

kernels::HostTensor read_tensor_bin(const std::filesystem::path& path, ir::DType dtype, std::vector<int64_t> shape) {
  try {
    return tensor_from_bin_bytes(read_bytes(path), dtype, std::move(shape));
  } catch (const std::exception& e) {
    throw std::runtime_error(fmt::format("{}: {}", path.string(), e.what()));
  }
}

void write_tensor_pb(const std::filesystem::path& path, const kernels::HostTensor& t, const std::string& name) {
  onnx::TensorProto p;
  p.set_name(name);
  for (int64_t d : t.shape) p.add_dims(d);
  int code = 0;
  for (int c = 1; c <= 16 && !code; ++c)
    if (ir::dtype_from_onnx(c) == t.dtype) code = c;
  if (!code) throw std::runtime_error(fmt::format("dtype {} has no ONNX code", ir::dtype_name(t.dtype)));
  p.set_data_type(code);
  p.set_raw_data(std::string(reinterpret_cast<const char*>(t.data.data()), t.data.size()));
  std::ofstream f(path, std::ios::binary);
  if (!f || !p.SerializeToOstream(&f)) throw std::runtime_error(fmt::format("cannot write {}", path.string()));
}

double OrtRandom::next() {
  // JavaScript: seed = (seed * 1103515245 + 12345) & 0x7fffffff, in doubles, then ToInt32.
  double p = static_cast<double>(seed_) * 1103515245.0;
  p = p + 12345.0;
  const uint64_t as_int = static_cast<uint64_t>(p);  // p is a non-negative integer below 2^63
  seed_ = static_cast<uint32_t>(as_int) & 0x7fffffffu;
  return static_cast<double>(seed_) / 2147483647.0;
}

kernels::HostTensor OrtRandom::tensor(ir::DType dtype, const std::vector<int64_t>& shape) {
  kernels::HostTensor t = kernels::HostTensor::zeros(dtype, shape);
  if (ir::is_float(dtype))
    for (int64_t i = 0; i < t.numel(); ++i) t.set_f(i, static_cast<float>(next() * 2 - 1));
  return t;
}

}  // namespace vkc::tools
