#include "vkc/kernels/host_tensor.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "vkc/ir/half.h"

namespace vkc::kernels {
namespace {

template <typename T>
T load(const uint8_t* p, int64_t i) {
  T v;
  std::memcpy(&v, p + i * sizeof(T), sizeof(T));
  return v;
}

template <typename T>
void store(uint8_t* p, int64_t i, T v) {
  std::memcpy(p + i * sizeof(T), &v, sizeof(T));
}

thread_local uint64_t t_allocation_limit = uint64_t{1} << 46;  // 64 TiB: a claim, not a tensor

}  // namespace

// A limit within a limit: the smaller holds (an embedder's cap is not raised by an inner scope).
AllocationLimit::AllocationLimit(uint64_t bytes) : previous_(t_allocation_limit) {
  t_allocation_limit = std::min(bytes, previous_);
}
AllocationLimit::~AllocationLimit() { t_allocation_limit = previous_; }

// Checked: shapes come from files, and a product past int64 is an error, not a wrapped count.
int64_t HostTensor::numel() const {
  int64_t n = 1;
  for (int64_t d : shape)
    if (__builtin_mul_overflow(n, d, &n))
      throw KernelError(fmt::format("a tensor of shape [{}] has more elements than int64 can count",
                                    fmt::join(shape, ",")));
  return n;
}

void check_allocation(ir::DType dtype, const std::vector<int64_t>& shape) {
  uint64_t bytes = ir::dtype_size(dtype);
  for (int64_t d : shape)
    if (d < 0) throw KernelError(fmt::format("a tensor of shape [{}] has a negative dim", fmt::join(shape, ",")));
  if (std::find(shape.begin(), shape.end(), 0) != shape.end()) return;  // empty: no bytes, whatever the other dims
  for (int64_t d : shape) {
    if (__builtin_mul_overflow(bytes, static_cast<uint64_t>(d), &bytes) || bytes > t_allocation_limit)
      throw KernelError(fmt::format("a tensor of shape [{}] would take more than the {} bytes allowed here",
                                    fmt::join(shape, ","), t_allocation_limit));
  }
}

std::vector<float> f32_buffer(const std::vector<int64_t>& shape, float fill) {
  check_allocation(ir::DType::Float32, shape);
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return std::vector<float>(static_cast<size_t>(n), fill);
}

HostTensor HostTensor::zeros(ir::DType dtype, std::vector<int64_t> shape) {
  // A shape computed from a model's data is checked before it sizes an allocation.
  check_allocation(dtype, shape);
  HostTensor t{dtype, std::move(shape), {}};
  t.data = ir::TensorData::owned(std::vector<uint8_t>(t.numel() * ir::dtype_size(dtype), 0));
  return t;
}

double HostTensor::get_f(int64_t i) const {
  const uint8_t* p = data.data();
  switch (dtype) {
    case ir::DType::Float32: return load<float>(p, i);
    case ir::DType::Float64: return load<double>(p, i);
    case ir::DType::Float16: return ir::half_to_float(load<uint16_t>(p, i));
    case ir::DType::BFloat16: {
      const uint32_t bits = uint32_t(load<uint16_t>(p, i)) << 16;
      float f;
      std::memcpy(&f, &bits, 4);
      return f;
    }
    default: return static_cast<double>(get_i(i));
  }
}

int64_t HostTensor::get_i(int64_t i) const {
  const uint8_t* p = data.data();
  switch (dtype) {
    case ir::DType::Bool: return load<uint8_t>(p, i) != 0;
    case ir::DType::UInt8: return load<uint8_t>(p, i);
    case ir::DType::Int8: return load<int8_t>(p, i);
    case ir::DType::UInt16: return load<uint16_t>(p, i);
    case ir::DType::Int16: return load<int16_t>(p, i);
    case ir::DType::UInt32: return load<uint32_t>(p, i);
    case ir::DType::Int32: return load<int32_t>(p, i);
    case ir::DType::UInt64: return static_cast<int64_t>(load<uint64_t>(p, i));
    case ir::DType::Int64: return load<int64_t>(p, i);
    case ir::DType::Float16: case ir::DType::BFloat16: case ir::DType::Float32: case ir::DType::Float64:
      return float_to_int64(get_f(i));
    default: throw KernelError(fmt::format("dtype {} is not numeric", ir::dtype_name(dtype)));
  }
}

std::vector<int64_t> HostTensor::ints() const {
  std::vector<int64_t> out(numel());
  for (int64_t i = 0; i < numel(); ++i) out[i] = get_i(i);
  return out;
}

void HostTensor::set_f(int64_t i, double v) const {
  uint8_t* p = mutable_bytes();
  switch (dtype) {
    case ir::DType::Float32: return store<float>(p, i, static_cast<float>(v));
    case ir::DType::Float64: return store<double>(p, i, v);
    case ir::DType::Float16: return store<uint16_t>(p, i, ir::float_to_half(static_cast<float>(v)));
    case ir::DType::BFloat16: {
      const float f = static_cast<float>(v);
      uint32_t bits;
      std::memcpy(&bits, &f, 4);
      bits += 0x7fff + ((bits >> 16) & 1);  // round to nearest even
      return store<uint16_t>(p, i, static_cast<uint16_t>(bits >> 16));
    }
    default: return set_i(i, float_to_int64(v));
  }
}

void HostTensor::set_i(int64_t i, int64_t v) const {
  uint8_t* p = mutable_bytes();
  switch (dtype) {
    case ir::DType::Bool: return store<uint8_t>(p, i, v != 0);
    case ir::DType::UInt8: return store<uint8_t>(p, i, static_cast<uint8_t>(v));
    case ir::DType::Int8: return store<int8_t>(p, i, static_cast<int8_t>(v));
    case ir::DType::UInt16: return store<uint16_t>(p, i, static_cast<uint16_t>(v));
    case ir::DType::Int16: return store<int16_t>(p, i, static_cast<int16_t>(v));
    case ir::DType::UInt32: return store<uint32_t>(p, i, static_cast<uint32_t>(v));
    case ir::DType::Int32: return store<int32_t>(p, i, static_cast<int32_t>(v));
    case ir::DType::UInt64: return store<uint64_t>(p, i, static_cast<uint64_t>(v));
    case ir::DType::Int64: return store<int64_t>(p, i, v);
    case ir::DType::Float16: case ir::DType::BFloat16: case ir::DType::Float32: case ir::DType::Float64:
      return set_f(i, static_cast<double>(v));
    default: throw KernelError(fmt::format("dtype {} is not numeric", ir::dtype_name(dtype)));
  }
}

std::vector<int64_t> strides_of(const std::vector<int64_t>& shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;) s[i - 1] = s[i] * shape[i];
  return s;
}

std::vector<int64_t> broadcast_shapes(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  const size_t rank = std::max(a.size(), b.size());
  std::vector<int64_t> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1)
      throw KernelError(fmt::format("shapes [{}] and [{}] do not broadcast", fmt::join(a, ","), fmt::join(b, ",")));
    out[i] = da == 1 ? db : da;
  }
  return out;
}

int64_t normalize_axis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= std::max<int64_t>(rank, 1))
    throw KernelError(fmt::format("axis {} is out of range for rank {}", axis, rank));
  return axis < 0 ? axis + rank : axis;
}

}  // namespace vkc::kernels
