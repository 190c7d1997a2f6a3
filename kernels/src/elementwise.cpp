#include <fmt/format.h>

#include "vkc/kernels/elementwise.h"

#include <cmath>

#include "broadcast.h"
#include "vkc/ir/half.h"

namespace vkc::kernels {
namespace {

bool is_comparison(BinaryOp op) {
  switch (op) {
    case BinaryOp::Equal: case BinaryOp::Less: case BinaryOp::Greater: case BinaryOp::LessOrEqual:
    case BinaryOp::GreaterOrEqual: case BinaryOp::And: case BinaryOp::Or:
      return true;
    default:
      return false;
  }
}

double apply_float(BinaryOp op, double a, double b) {
  switch (op) {
    case BinaryOp::Add: return a + b;
    case BinaryOp::Sub: return a - b;
    case BinaryOp::Mul: return a * b;
    case BinaryOp::Div: return a / b;
    case BinaryOp::Pow: return std::pow(a, b);
    case BinaryOp::Min: return std::min(a, b);
    case BinaryOp::Max: return std::max(a, b);
    case BinaryOp::Mod: return std::fmod(a, b);
    case BinaryOp::Equal: return a == b;
    case BinaryOp::Less: return a < b;
    case BinaryOp::Greater: return a > b;
    case BinaryOp::LessOrEqual: return a <= b;
    case BinaryOp::GreaterOrEqual: return a >= b;
    case BinaryOp::And: return a != 0 && b != 0;
    case BinaryOp::Or: return a != 0 || b != 0;
  }
  return 0;
}

int64_t apply_int(BinaryOp op, int64_t a, int64_t b) {
  switch (op) {
    case BinaryOp::Add: return a + b;
    case BinaryOp::Sub: return a - b;
    case BinaryOp::Mul: return a * b;
    case BinaryOp::Div:
      if (b == 0) throw KernelError("integer division by zero");
      return a / b;
    case BinaryOp::Mod:  // ONNX Mod with fmod=0: the result takes the divisor's sign
      if (b == 0) throw KernelError("integer modulo by zero");
      return ((a % b) + b) % b;
    case BinaryOp::Pow: return static_cast<int64_t>(std::pow(static_cast<double>(a), static_cast<double>(b)));
    default: return static_cast<int64_t>(apply_float(op, static_cast<double>(a), static_cast<double>(b)));
  }
}

double apply_unary(UnaryOp op, double x) {
  switch (op) {
    case UnaryOp::Neg: return -x;
    case UnaryOp::Abs: return std::fabs(x);
    case UnaryOp::Sqrt: return std::sqrt(x);
    case UnaryOp::Reciprocal: return 1.0 / x;
    case UnaryOp::Exp: return std::exp(x);
    case UnaryOp::Log: return std::log(x);
    case UnaryOp::Sin: return std::sin(x);
    case UnaryOp::Cos: return std::cos(x);
    case UnaryOp::Tanh: return std::tanh(x);
    case UnaryOp::Erf: return std::erf(x);
    case UnaryOp::Sigmoid: return 1.0 / (1.0 + std::exp(-x));
    case UnaryOp::Relu: return x > 0 ? x : 0;
    case UnaryOp::Floor: return std::floor(x);
    case UnaryOp::Ceil: return std::ceil(x);
    case UnaryOp::Round: return std::nearbyint(x);  // half to even, as ONNX
    case UnaryOp::Not: return x == 0;
  }
  return 0;
}

}  // namespace

HostTensor binary(BinaryOp op, const HostTensor& a, const HostTensor& b) {
  const auto shape = broadcast_shapes(a.shape, b.shape);
  HostTensor out = HostTensor::zeros(is_comparison(op) ? ir::DType::Bool : a.dtype, shape);
  const bool integral = !ir::is_float(a.dtype) && !ir::is_float(b.dtype);
  for_each_broadcast(shape, {&a.shape, &b.shape}, [&](int64_t o, const int64_t* in) {
    if (integral && !is_comparison(op)) out.set_i(o, apply_int(op, a.get_i(in[0]), b.get_i(in[1])));
    else out.set_f(o, apply_float(op, a.get_f(in[0]), b.get_f(in[1])));
  });
  return out;
}

HostTensor unary(UnaryOp op, const HostTensor& x) {
  HostTensor out = HostTensor::zeros(op == UnaryOp::Not ? ir::DType::Bool : x.dtype, x.shape);
  const bool integral = !ir::is_float(x.dtype);
  for (int64_t i = 0; i < x.numel(); ++i) {
    if (integral && (op == UnaryOp::Neg || op == UnaryOp::Abs)) {
      const int64_t v = x.get_i(i);
      out.set_i(i, op == UnaryOp::Neg ? -v : (v < 0 ? -v : v));
    } else {
      out.set_f(i, apply_unary(op, x.get_f(i)));
    }
  }
  return out;
}

HostTensor where(const HostTensor& cond, const HostTensor& a, const HostTensor& b) {
  const auto shape = broadcast_shapes(cond.shape, broadcast_shapes(a.shape, b.shape));
  HostTensor out = HostTensor::zeros(a.dtype, shape);
  const bool integral = !ir::is_float(a.dtype);
  for_each_broadcast(shape, {&cond.shape, &a.shape, &b.shape}, [&](int64_t o, const int64_t* in) {
    const bool c = cond.get_i(in[0]) != 0;
    if (integral) out.set_i(o, c ? a.get_i(in[1]) : b.get_i(in[2]));
    else out.set_f(o, c ? a.get_f(in[1]) : b.get_f(in[2]));
  });
  return out;
}

HostTensor cast(const HostTensor& x, ir::DType to) {
  const int64_t n = x.numel();
  if (x.data.size() != static_cast<size_t>(n) * ir::dtype_size(x.dtype))
    throw KernelError(fmt::format("cast: {} bytes of data for a {} tensor of {} elements", x.data.size(),
                                  ir::dtype_name(x.dtype), n));
  HostTensor out = HostTensor::zeros(to, x.shape);
  // f32 <-> f16 (the Vulkan backend's staging of fp16 programs): typed loops, no per-element dispatch.
  if (x.dtype == ir::DType::Float32 && to == ir::DType::Float16) {
    const auto* src = reinterpret_cast<const float*>(x.data.data());
    auto* dst = reinterpret_cast<uint16_t*>(out.mutable_bytes());
    for (int64_t i = 0; i < n; ++i) dst[i] = ir::float_to_half(src[i]);
    return out;
  }
  if (x.dtype == ir::DType::Float16 && to == ir::DType::Float32) {
    ir::halves_to_floats(reinterpret_cast<const uint16_t*>(x.data.data()), reinterpret_cast<float*>(out.mutable_bytes()),
                         static_cast<size_t>(n));
    return out;
  }
  const bool from_float = ir::is_float(x.dtype);
  for (int64_t i = 0; i < n; ++i) {
    if (ir::is_float(to)) out.set_f(i, x.get_f(i));
    else if (to == ir::DType::Bool) out.set_i(i, from_float ? x.get_f(i) != 0 : x.get_i(i) != 0);
    else out.set_i(i, from_float ? float_to_int64(x.get_f(i)) : x.get_i(i));
  }
  return out;
}

}  // namespace vkc::kernels
