#include "vkc/kernels/data_movement.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "broadcast.h"

namespace vkc::kernels {
namespace {

// Copies element `from` of x into element `to` of out, whatever the dtype.
void copy_element(const HostTensor& x, int64_t from, const HostTensor& out, int64_t to) {
  const size_t size = ir::dtype_size(x.dtype);
  std::memcpy(out.mutable_bytes() + to * size, x.data.data() + from * size, size);
}

}  // namespace

HostTensor reshape(const HostTensor& x, std::vector<int64_t> shape) {
  HostTensor out{x.dtype, std::move(shape), x.data};
  if (out.numel() != x.numel())
    throw KernelError(fmt::format("cannot reshape {} elements into [{}]", x.numel(), fmt::join(out.shape, ",")));
  return out;
}

HostTensor transpose(const HostTensor& x, const std::vector<int64_t>& perm) {
  const size_t rank = x.shape.size();
  if (perm.size() != rank) throw KernelError("perm does not match the rank");
  std::vector<int64_t> shape(rank);
  for (size_t i = 0; i < rank; ++i) shape[i] = x.shape.at(normalize_axis(perm[i], rank));
  HostTensor out = HostTensor::zeros(x.dtype, shape);
  const auto in_strides = strides_of(x.shape);
  std::vector<int64_t> idx(rank, 0);
  for (int64_t o = 0; o < out.numel(); ++o) {
    int64_t from = 0;
    for (size_t d = 0; d < rank; ++d) from += idx[d] * in_strides[perm[d]];
    copy_element(x, from, out, o);
    for (size_t d = rank; d-- > 0;) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
  return out;
}

HostTensor concat(const std::vector<const HostTensor*>& xs, int64_t axis) {
  if (xs.empty()) throw KernelError("concat of nothing");
  const int64_t rank = static_cast<int64_t>(xs[0]->shape.size());
  if (rank == 0) throw KernelError("concat of scalars");
  axis = normalize_axis(axis, rank);
  std::vector<int64_t> shape = xs[0]->shape;
  shape[axis] = 0;
  for (const HostTensor* x : xs) {
    if (static_cast<int64_t>(x->shape.size()) != rank) throw KernelError("concat inputs differ in rank");
    if (x->dtype != xs[0]->dtype) throw KernelError("concat inputs differ in dtype");
    for (int64_t d = 0; d < rank; ++d)
      if (d != axis && x->shape[d] != xs[0]->shape[d]) throw KernelError("concat inputs differ off the axis");
    if (x->data.size() != static_cast<size_t>(x->numel()) * ir::dtype_size(x->dtype))
      throw KernelError("concat input's data does not match its shape");
    shape[axis] += x->shape[axis];
  }
  HostTensor out = HostTensor::zeros(xs[0]->dtype, shape);
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= shape[d];
  for (int64_t d = axis + 1; d < rank; ++d) inner *= shape[d];
  const size_t es = ir::dtype_size(out.dtype);
  int64_t offset = 0;
  for (const HostTensor* x : xs) {
    const int64_t chunk = x->shape[axis] * inner;
    if (chunk == 0) continue;  // an empty input adds nothing (and its data pointer may be null)
    for (int64_t o = 0; o < outer; ++o)
      std::memcpy(out.mutable_bytes() + (o * shape[axis] * inner + offset) * es, x->data.data() + o * chunk * es,
                  chunk * es);
    offset += chunk;
  }
  return out;
}

HostTensor slice(const HostTensor& x, const std::vector<int64_t>& starts, const std::vector<int64_t>& ends,
                 const std::vector<int64_t>& axes, const std::vector<int64_t>& steps) {
  const int64_t rank = static_cast<int64_t>(x.shape.size());
  std::vector<int64_t> start(rank, 0), step(rank, 1), shape = x.shape;
  for (size_t i = 0; i < starts.size(); ++i) {
    const int64_t a = normalize_axis(axes.empty() ? static_cast<int64_t>(i) : axes[i], rank);
    const int64_t dim = x.shape[a];
    const int64_t st = steps.empty() ? 1 : steps[i];
    if (st == 0) throw KernelError("slice step 0");
    auto clampi = [&](int64_t v, int64_t lo, int64_t hi) { return std::max(lo, std::min(hi, v)); };
    int64_t s = starts[i] < 0 ? starts[i] + dim : starts[i];
    int64_t e = ends[i] < 0 ? ends[i] + dim : ends[i];
    if (st > 0) {
      s = clampi(s, 0, dim);
      e = clampi(e, 0, dim);
      shape[a] = std::max<int64_t>(0, (e - s + st - 1) / st);
    } else {
      s = clampi(s, -1, dim - 1);
      e = clampi(e, -1, dim - 1);
      shape[a] = std::max<int64_t>(0, (s - e + (-st) - 1) / (-st));
    }
    start[a] = s;
    step[a] = st;
  }
  HostTensor out = HostTensor::zeros(x.dtype, shape);
  const auto in_strides = strides_of(x.shape);
  std::vector<int64_t> idx(rank, 0);
  for (int64_t o = 0; o < out.numel(); ++o) {
    int64_t from = 0;
    for (int64_t d = 0; d < rank; ++d) from += (start[d] + idx[d] * step[d]) * in_strides[d];
    copy_element(x, from, out, o);
    for (int64_t d = rank; d-- > 0;) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
  return out;
}

HostTensor gather(const HostTensor& x, const HostTensor& indices, int64_t axis) {
  const int64_t rank = static_cast<int64_t>(x.shape.size());
  axis = normalize_axis(axis, rank);
  std::vector<int64_t> shape(x.shape.begin(), x.shape.begin() + axis);
  shape.insert(shape.end(), indices.shape.begin(), indices.shape.end());
  shape.insert(shape.end(), x.shape.begin() + axis + 1, x.shape.end());
  HostTensor out = HostTensor::zeros(x.dtype, shape);
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= x.shape[d];
  for (int64_t d = axis + 1; d < rank; ++d) inner *= x.shape[d];
  const int64_t n = indices.numel(), dim = x.shape[axis];
  const size_t es = ir::dtype_size(x.dtype);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < n; ++j) {
      int64_t k = indices.get_i(j);
      if (k < 0) k += dim;
      if (k < 0 || k >= dim) throw KernelError(fmt::format("gather index {} is out of range [0, {})", k, dim));
      std::memcpy(out.mutable_bytes() + ((o * n + j) * inner) * es, x.data.data() + ((o * dim + k) * inner) * es,
                  inner * es);
    }
  return out;
}

HostTensor gather_elements(const HostTensor& x, const HostTensor& indices, int64_t axis) {
  const int64_t rank = static_cast<int64_t>(x.shape.size());
  axis = normalize_axis(axis, rank);
  if (static_cast<int64_t>(indices.shape.size()) != rank)
    throw KernelError("gather indices must have the input's rank");
  for (int64_t d = 0; d < rank; ++d)
    if (d != axis && indices.shape[d] > x.shape[d])
      throw KernelError(fmt::format("gather indices are larger than the input along dim {}", d));
  HostTensor out = HostTensor::zeros(x.dtype, indices.shape);
  const auto in_strides = strides_of(x.shape);
  std::vector<int64_t> idx(static_cast<size_t>(rank), 0);
  const int64_t dim = x.shape[axis];
  for (int64_t o = 0; o < out.numel(); ++o) {
    int64_t k = indices.get_i(o);
    if (k < 0) k += dim;
    if (k < 0 || k >= dim) throw KernelError(fmt::format("gather index {} is out of range [0, {})", k, dim));
    int64_t from = 0;
    for (int64_t d = 0; d < rank; ++d) from += (d == axis ? k : idx[d]) * in_strides[d];
    copy_element(x, from, out, o);
    for (int64_t d = rank - 1; d >= 0 && ++idx[d] == indices.shape[d]; --d) idx[d] = 0;
  }
  return out;
}

HostTensor expand(const HostTensor& x, const std::vector<int64_t>& shape) {
  const auto out_shape = broadcast_shapes(x.shape, shape);
  HostTensor out = HostTensor::zeros(x.dtype, out_shape);
  for_each_broadcast(out_shape, {&x.shape}, [&](int64_t o, const int64_t* in) { copy_element(x, in[0], out, o); });
  return out;
}

HostTensor tile(const HostTensor& x, const std::vector<int64_t>& repeats) {
  const size_t rank = x.shape.size();
  if (repeats.size() != rank) throw KernelError("repeats does not match the rank");
  std::vector<int64_t> shape(rank);
  for (size_t d = 0; d < rank; ++d) shape[d] = x.shape[d] * repeats[d];
  HostTensor out = HostTensor::zeros(x.dtype, shape);
  const auto in_strides = strides_of(x.shape);
  std::vector<int64_t> idx(rank, 0);
  for (int64_t o = 0; o < out.numel(); ++o) {
    int64_t from = 0;
    for (size_t d = 0; d < rank; ++d) from += (idx[d] % x.shape[d]) * in_strides[d];
    copy_element(x, from, out, o);
    for (size_t d = rank; d-- > 0;) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
  return out;
}

HostTensor range(double start, double limit, double delta, ir::DType dtype) {
  if (delta == 0) throw KernelError("range delta 0");
  const double count = std::ceil((limit - start) / delta);
  if (!(count < 9.0e18)) throw KernelError(fmt::format("range of {} elements", count));  // also NaN, inf
  const int64_t n = count > 0 ? static_cast<int64_t>(count) : 0;  // also -inf (an infinite start or delta)
  HostTensor out = HostTensor::zeros(dtype, {n});
  for (int64_t i = 0; i < n; ++i) out.set_f(i, start + static_cast<double>(i) * delta);
  return out;
}

HostTensor reduce(ReduceOp op, const HostTensor& x, std::vector<int64_t> axes, bool keepdims) {
  const int64_t rank = static_cast<int64_t>(x.shape.size());
  if (axes.empty())
    for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
  std::vector<bool> reduced(rank, false);
  for (int64_t a : axes) reduced[normalize_axis(a, rank)] = true;
  std::vector<int64_t> kept_shape(rank), out_shape;
  for (int64_t d = 0; d < rank; ++d) {
    kept_shape[d] = reduced[d] ? 1 : x.shape[d];
    if (!reduced[d] || keepdims) out_shape.push_back(kept_shape[d]);
  }
  HostTensor out = HostTensor::zeros(x.dtype, out_shape);
  const int64_t n_out = out.numel();
  std::vector<double> acc(n_out, op == ReduceOp::Prod ? 1.0 : op == ReduceOp::Max ? -INFINITY : op == ReduceOp::Min ? INFINITY : 0.0);
  const auto out_strides = strides_of(kept_shape);
  std::vector<int64_t> idx(rank, 0);
  for (int64_t i = 0; i < x.numel(); ++i) {
    int64_t o = 0;
    for (int64_t d = 0; d < rank; ++d) o += (reduced[d] ? 0 : idx[d]) * out_strides[d];
    const double v = x.get_f(i);
    switch (op) {
      case ReduceOp::Sum: case ReduceOp::Mean: acc[o] += v; break;
      case ReduceOp::Prod: acc[o] *= v; break;
      case ReduceOp::Max: acc[o] = std::max(acc[o], v); break;
      case ReduceOp::Min: acc[o] = std::min(acc[o], v); break;
    }
    for (int64_t d = rank; d-- > 0;) {
      if (++idx[d] < x.shape[d]) break;
      idx[d] = 0;
    }
  }
  const double count = x.numel() / std::max<int64_t>(n_out, 1);
  for (int64_t o = 0; o < n_out; ++o) out.set_f(o, op == ReduceOp::Mean ? acc[o] / count : acc[o]);
  return out;
}

HostTensor arg_reduce(bool max, const HostTensor& x, int64_t axis, bool keepdims) {
  const int64_t rank = static_cast<int64_t>(x.shape.size());
  axis = normalize_axis(axis, rank);
  std::vector<int64_t> out_shape;
  for (int64_t d = 0; d < rank; ++d)
    if (d != axis || keepdims) out_shape.push_back(d == axis ? 1 : x.shape[d]);
  HostTensor out = HostTensor::zeros(ir::DType::Int64, out_shape);
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= x.shape[d];
  for (int64_t d = axis + 1; d < rank; ++d) inner *= x.shape[d];
  const int64_t n = x.shape[axis];
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      int64_t best = 0;
      double bv = x.get_f(o * n * inner + i);
      for (int64_t k = 1; k < n && !std::isnan(bv); ++k) {
        const double v = x.get_f((o * n + k) * inner + i);
        if (std::isnan(v) || (max ? v > bv : v < bv)) best = k, bv = v;
      }
      out.set_i(o * inner + i, best);
    }
  return out;
}

HostTensor trilu(const HostTensor& x, bool upper, int64_t k) {
  const size_t r = x.shape.size();
  if (r < 2) throw KernelError("Trilu needs rank >= 2");
  const int64_t rows = x.shape[r - 2], cols = x.shape[r - 1];
  HostTensor out = HostTensor::zeros(x.dtype, x.shape);
  for (int64_t i = 0; i < x.numel(); ++i) {
    const int64_t c = i % cols, row = (i / cols) % rows;
    if (upper ? c - row >= k : c - row <= k) {
      if (ir::is_float(x.dtype)) out.set_f(i, x.get_f(i));
      else out.set_i(i, x.get_i(i));
    }
  }
  return out;
}

HostTensor cumsum(const HostTensor& x, int64_t axis, bool exclusive, bool reverse) {
  axis = normalize_axis(axis, static_cast<int64_t>(x.shape.size()));
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= x.shape[d];
  for (size_t d = axis + 1; d < x.shape.size(); ++d) inner *= x.shape[d];
  const int64_t n = x.shape[axis];
  HostTensor out = HostTensor::zeros(x.dtype, x.shape);
  const bool fp = ir::is_float(x.dtype);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      double acc = 0;
      int64_t iacc = 0;
      for (int64_t s = 0; s < n; ++s) {
        const int64_t k = reverse ? n - 1 - s : s;
        const int64_t at = (o * n + k) * inner + i;
        if (exclusive) {
          fp ? out.set_f(at, acc) : out.set_i(at, iacc);
        }
        acc += fp ? x.get_f(at) : 0.0;
        iacc += fp ? 0 : x.get_i(at);
        if (!exclusive) {
          fp ? out.set_f(at, acc) : out.set_i(at, iacc);
        }
      }
    }
  return out;
}

}  // namespace vkc::kernels
