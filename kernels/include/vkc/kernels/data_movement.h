// Data-movement CPU reference kernels (ONNX semantics).
#pragma once

#include <vector>

#include "vkc/kernels/host_tensor.h"

namespace vkc::kernels {

/// The same bytes seen with another shape (numel must match).
HostTensor reshape(const HostTensor& x, std::vector<int64_t> shape);
HostTensor transpose(const HostTensor& x, const std::vector<int64_t>& perm);
HostTensor concat(const std::vector<const HostTensor*>& xs, int64_t axis);
/// ONNX Slice: per axis start/end (clamped; negatives count from the end) and step.
HostTensor slice(const HostTensor& x, const std::vector<int64_t>& starts, const std::vector<int64_t>& ends,
                 const std::vector<int64_t>& axes, const std::vector<int64_t>& steps);
/// ONNX Gather: indices (negatives count from the end) select along `axis`.
HostTensor gather(const HostTensor& x, const HostTensor& indices, int64_t axis);
/// ONNX GatherElements / aten.gather: out[i] = x[i with i[axis] = indices[i]] (indices has x's
/// rank and is no larger along any other axis; negatives count from the end).
HostTensor gather_elements(const HostTensor& x, const HostTensor& indices, int64_t axis);
/// ONNX Expand: broadcast x to `shape` (bidirectional, as ONNX).
HostTensor expand(const HostTensor& x, const std::vector<int64_t>& shape);
HostTensor tile(const HostTensor& x, const std::vector<int64_t>& repeats);
/// ONNX Range over start/limit/delta scalars of dtype `dtype`.
HostTensor range(double start, double limit, double delta, ir::DType dtype);

enum class ReduceOp { Sum, Mean, Max, Min, Prod };
/// Reduces `axes` (empty: all axes unless noop_with_empty_axes).
HostTensor reduce(ReduceOp op, const HostTensor& x, std::vector<int64_t> axes, bool keepdims);
/// ONNX Trilu: the upper (or lower) triangle of the last two dims from diagonal k, zeros elsewhere.
HostTensor trilu(const HostTensor& x, bool upper, int64_t k);
/// ONNX CumSum along `axis` (exclusive: shifted by one; reverse: from the end).
HostTensor cumsum(const HostTensor& x, int64_t axis, bool exclusive, bool reverse);
/// aten.argmax / argmin along `axis` (the first index of the extreme value; NaN counts as the
/// extreme, as torch): int64 indices.
HostTensor arg_reduce(bool max, const HostTensor& x, int64_t axis, bool keepdims);

}  // namespace vkc::kernels
