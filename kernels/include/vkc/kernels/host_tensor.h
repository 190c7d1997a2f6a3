// A tensor in host memory, the value CPU reference kernels read and write.
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "vkc/ir/dtype.h"
#include "vkc/ir/tensor_data.h"

namespace vkc::kernels {

/// A float read as an integer, truncated toward zero: NaN is 0 and values past int64's range
/// saturate (C++ leaves both undefined; ONNX's Cast does not define them either).
inline int64_t float_to_int64(double v) {
  if (v != v) return 0;
  if (v >= 9223372036854775807.0) return INT64_MAX;
  if (v <= -9223372036854775808.0) return INT64_MIN;
  return static_cast<int64_t>(v);
}

/// Thrown when a kernel cannot compute its result (bad shapes, unsupported dtype).
struct KernelError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct HostTensor {
  ir::DType dtype = ir::DType::Float32;
  std::vector<int64_t> shape;
  ir::TensorData data;  // row-major, little-endian

  int64_t numel() const;
  /// A tensor of `shape` with zeroed, owned storage.
  static HostTensor zeros(ir::DType dtype, std::vector<int64_t> shape);
  template <typename T>
  static HostTensor of(ir::DType dtype, std::vector<int64_t> shape, const std::vector<T>& values) {
    std::vector<uint8_t> bytes(values.size() * sizeof(T));
    if (!values.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
    return {dtype, std::move(shape), ir::TensorData::owned(std::move(bytes))};
  }
  /// Element i converted to double / int64 (any numeric or bool dtype).
  double get_f(int64_t i) const;
  int64_t get_i(int64_t i) const;
  /// All elements as int64 (for shape-like tensors).
  std::vector<int64_t> ints() const;
  /// Writable bytes of an owned tensor made by zeros().
  uint8_t* mutable_bytes() const { return const_cast<uint8_t*>(data.data()); }
  void set_f(int64_t i, double v) const;
  void set_i(int64_t i, int64_t v) const;
};

/// While alive, HostTensor::zeros on this thread refuses (KernelError) a tensor of more than `bytes`.
/// The CPU executor sets it from the sizes a program declares, so that sizes computed from a corrupt
/// program's arguments cannot make it allocate more than the program could ever need.
/// Nested limits keep the smallest.
class AllocationLimit {
 public:
  explicit AllocationLimit(uint64_t bytes);
  ~AllocationLimit();
  AllocationLimit(const AllocationLimit&) = delete;
  AllocationLimit& operator=(const AllocationLimit&) = delete;

 private:
  uint64_t previous_;
};

/// Throws KernelError when a tensor of `shape` in `dtype` has a negative dim, overflows, or passes
/// the thread's AllocationLimit: every allocation sized from a program's numbers goes through it.
void check_allocation(ir::DType dtype, const std::vector<int64_t>& shape);
/// A checked fp32 work buffer of `shape`'s element count (check_allocation first).
std::vector<float> f32_buffer(const std::vector<int64_t>& shape, float fill = 0.0f);

/// Row-major strides of `shape` in elements.
std::vector<int64_t> strides_of(const std::vector<int64_t>& shape);
/// ONNX/numpy broadcast of two shapes; throws KernelError when they do not broadcast.
std::vector<int64_t> broadcast_shapes(const std::vector<int64_t>& a, const std::vector<int64_t>& b);
/// Normalizes an axis in [-rank, rank) to [0, rank); throws KernelError otherwise.
int64_t normalize_axis(int64_t axis, int64_t rank);

}  // namespace vkc::kernels
