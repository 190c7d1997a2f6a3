#include "vkc/kernels/shape_ops.h"

#include <fmt/format.h>

#include "vkc/kernels/data_movement.h"

namespace vkc::kernels {

HostTensor constant_pad_nd(const HostTensor& x, const std::vector<int64_t>& pad, double value) {
  const size_t rank = x.shape.size();
  if (pad.size() % 2 != 0 || pad.size() / 2 > rank)
    throw KernelError(fmt::format("constant_pad_nd: {} pad values for rank {}", pad.size(), rank));
  std::vector<int64_t> before(rank, 0), shape = x.shape;
  for (size_t i = 0; i < pad.size() / 2; ++i) {
    const size_t d = rank - 1 - i;
    before[d] = pad[2 * i];
    if (__builtin_add_overflow(shape[d], pad[2 * i], &shape[d]) || __builtin_add_overflow(shape[d], pad[2 * i + 1], &shape[d]))
      throw KernelError("constant_pad_nd: the padded size overflows");
    if (shape[d] < 0) throw KernelError("constant_pad_nd: negative output size");
  }
  HostTensor out = HostTensor::zeros(x.dtype, shape);
  const auto in_strides = strides_of(x.shape);
  const size_t es = ir::dtype_size(x.dtype);
  std::vector<int64_t> idx(rank, 0);
  for (int64_t o = 0; o < out.numel(); ++o) {
    int64_t from = 0;
    bool inside = true;
    for (size_t d = 0; d < rank && inside; ++d) {
      const int64_t i = idx[d] - before[d];
      inside = i >= 0 && i < x.shape[d];
      from += i * in_strides[d];
    }
    if (inside) std::memcpy(out.mutable_bytes() + o * es, x.data.data() + from * es, es);
    else out.set_f(o, value);
    for (size_t d = rank; d-- > 0;) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
  return out;
}

std::vector<HostTensor> split_with_sizes(const HostTensor& x, const std::vector<int64_t>& sizes, int64_t dim) {
  dim = normalize_axis(dim, static_cast<int64_t>(x.shape.size()));
  int64_t total = 0;
  for (int64_t s : sizes) total += s;
  if (total != x.shape[dim])
    throw KernelError(fmt::format("split_with_sizes: sizes add up to {}, dim {} has {}", total, dim, x.shape[dim]));
  std::vector<HostTensor> out;
  int64_t start = 0;
  for (int64_t s : sizes) {
    out.push_back(slice(x, {start}, {start + s}, {dim}, {1}));
    start += s;
  }
  return out;
}

HostTensor pixel_shuffle(const HostTensor& x, int64_t r) {
  const size_t rank = x.shape.size();
  if (rank < 3 || r < 1 || x.shape[rank - 3] % (r * r) != 0)
    throw KernelError(fmt::format("pixel_shuffle: [{}] by {}", fmt::join(x.shape, ","), r));
  const int64_t C = x.shape[rank - 3] / (r * r), H = x.shape[rank - 2], W = x.shape[rank - 1];
  const int64_t outer = x.numel() / (C * r * r * H * W);
  std::vector<int64_t> shape = x.shape;
  shape[rank - 3] = C;
  shape[rank - 2] = H * r;
  shape[rank - 1] = W * r;
  HostTensor out = HostTensor::zeros(x.dtype, shape);
  const size_t es = ir::dtype_size(x.dtype);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t i = 0; i < r; ++i)
        for (int64_t j = 0; j < r; ++j)
          for (int64_t h = 0; h < H; ++h)
            for (int64_t w = 0; w < W; ++w) {
              const int64_t from = (((o * C + c) * r * r + i * r + j) * H + h) * W + w;
              const int64_t to = ((o * C + c) * H * r + h * r + i) * W * r + w * r + j;
              std::memcpy(out.mutable_bytes() + to * es, x.data.data() + from * es, es);
            }
  return out;
}

}  // namespace vkc::kernels
