#include "vkc/ir/shape.h"

#include <limits>

#include <stdexcept>

namespace vkc::ir {

Shape Shape::of(const std::vector<int64_t>& sizes) {
  Shape s;
  s.dims.reserve(sizes.size());
  for (int64_t v : sizes) s.dims.push_back(Dim::of(v));
  return s;
}

bool Shape::is_static() const {
  for (const Dim& d : dims)
    if (!d.is_static()) return false;
  return true;
}

std::vector<int64_t> Shape::sizes() const {
  std::vector<int64_t> out;
  out.reserve(dims.size());
  for (const Dim& d : dims) {
    if (!d.is_static()) throw std::logic_error("shape " + str() + " is not static");
    out.push_back(*d.value);
  }
  return out;
}

int64_t Shape::numel() const {
  int64_t n = 1;
  for (int64_t v : sizes())
    if (__builtin_mul_overflow(n, v, &n)) return std::numeric_limits<int64_t>::max();
  return n;
}

std::string Shape::str() const {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) s += ",";
    if (dims[i].value) s += std::to_string(*dims[i].value);
    else s += dims[i].symbol.empty() ? "?" : dims[i].symbol;
  }
  return s + "]";
}

std::string TensorType::str() const { return std::string(dtype_name(dtype)) + shape.str(); }

}  // namespace vkc::ir
