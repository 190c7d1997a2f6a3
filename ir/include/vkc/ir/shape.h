// Tensor shapes with static and symbolic (named) dimensions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "vkc/ir/dtype.h"

namespace vkc::ir {

/// One dimension: a known size, or a symbol such as "batch" (or unknown: empty symbol, no value).
struct Dim {
  std::optional<int64_t> value;
  std::string symbol;

  static Dim of(int64_t v) { return Dim{v, {}}; }
  static Dim sym(std::string s) { return Dim{std::nullopt, std::move(s)}; }
  bool is_static() const { return value.has_value(); }
  bool operator==(const Dim&) const = default;
};

struct Shape {
  std::vector<Dim> dims;

  Shape() = default;
  Shape(std::vector<Dim> d) : dims(std::move(d)) {}
  static Shape of(const std::vector<int64_t>& sizes);

  size_t rank() const { return dims.size(); }
  bool is_static() const;
  /// Sizes of a static shape (throws std::logic_error if any dim is symbolic).
  std::vector<int64_t> sizes() const;
  /// Product of the sizes of a static shape; 1 for rank 0.
  int64_t numel() const;
  /// "[1,3,224,224]", symbolic dims by name, unknown as "?".
  std::string str() const;
  bool operator==(const Shape&) const = default;
};

struct TensorType {
  DType dtype = DType::Undefined;
  Shape shape;
  /// Whether rank and dtype are known (shape inference succeeded).
  bool known() const { return dtype != DType::Undefined; }
  /// Bytes of a static-shaped tensor.
  /// Saturates at INT64_MAX (claimed shapes are checked against limits by their users).
  int64_t nbytes() const {
    int64_t n = 0;
    return __builtin_mul_overflow(shape.numel(), static_cast<int64_t>(dtype_size(dtype)), &n) ? INT64_MAX : n;
  }
  /// "f32[1,3,224,224]"
  std::string str() const;
  bool operator==(const TensorType&) const = default;
};

}  // namespace vkc::ir
