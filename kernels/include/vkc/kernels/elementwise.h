// Elementwise CPU reference kernels with ONNX/numpy broadcasting.
#pragma once

#include "vkc/kernels/host_tensor.h"

namespace vkc::kernels {

enum class BinaryOp { Add, Sub, Mul, Div, Pow, Min, Max, Mod, Equal, Less, Greater, LessOrEqual, GreaterOrEqual, And, Or };
enum class UnaryOp { Neg, Abs, Sqrt, Reciprocal, Exp, Log, Sin, Cos, Tanh, Erf, Sigmoid, Relu, Floor, Ceil, Round, Not };

/// Arithmetic keeps a's dtype (integers divide truncating, as ONNX); comparisons give bool.
HostTensor binary(BinaryOp op, const HostTensor& a, const HostTensor& b);
HostTensor unary(UnaryOp op, const HostTensor& x);
/// cond ? a : b, all three broadcast.
HostTensor where(const HostTensor& cond, const HostTensor& a, const HostTensor& b);
/// Converts every element to `to` (floats to integers truncate, as ONNX Cast).
HostTensor cast(const HostTensor& x, ir::DType to);

}  // namespace vkc::kernels
