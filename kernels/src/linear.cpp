#include "vkc/kernels/linear.h"

#include <fmt/format.h>

#include "broadcast.h"
#include "float_io.h"

namespace vkc::kernels {

HostTensor linear(const HostTensor& x, const HostTensor& weight, const HostTensor* bias) {
  if (x.shape.empty() || weight.shape.size() != 2 || weight.shape[1] != x.shape.back())
    throw KernelError(fmt::format("linear: input [{}] does not match weight [{}]", fmt::join(x.shape, ","),
                                  fmt::join(weight.shape, ",")));
  const int64_t K = x.shape.back(), N = weight.shape[0], M = x.numel() / std::max<int64_t>(K, 1);
  // The bias broadcasts over the output features (aten.linear is addmm(bias, x, weight^T)).
  if (bias && bias->numel() != N && bias->numel() != 1)
    throw KernelError(fmt::format("linear: bias of {} elements for {} output features", bias->numel(), N));
  const std::vector<float> in = to_f32(x), w = to_f32(weight);
  std::vector<float> b = bias ? to_f32(*bias) : std::vector<float>(N, 0.0f);
  if (b.size() == 1) b.assign(N, b[0]);
  std::vector<float> out = f32_buffer({M, N});
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      float acc = 0;
      const float* xr = &in[m * K];
      const float* wr = &w[n * K];
      for (int64_t k = 0; k < K; ++k) acc += xr[k] * wr[k];
      out[m * N + n] = acc + b[n];
    }
  std::vector<int64_t> shape = x.shape;
  shape.back() = N;
  return from_f32(x.dtype, std::move(shape), std::move(out));
}

HostTensor matmul(const HostTensor& a, const HostTensor& b) {
  const size_t rank = a.shape.size();
  bool ok = rank >= 2 && b.shape.size() == rank && a.shape[rank - 1] == b.shape[rank - 2];
  for (size_t d = 0; ok && d + 2 < rank; ++d) ok = a.shape[d] == b.shape[d];
  if (!ok)
    throw KernelError(
        fmt::format("matmul: [{}] x [{}] do not multiply", fmt::join(a.shape, ","), fmt::join(b.shape, ",")));
  const int64_t M = a.shape[rank - 2], K = a.shape[rank - 1], N = b.shape[rank - 1];
  const int64_t batch = a.numel() / std::max<int64_t>(M * K, 1);
  const std::vector<float> x = to_f32(a), y = to_f32(b);
  std::vector<float> out = f32_buffer({batch, M, N});
  for (int64_t bi = 0; bi < batch; ++bi)
    for (int64_t m = 0; m < M; ++m) {
      float* o = &out[(bi * M + m) * N];
      for (int64_t k = 0; k < K; ++k) {
        const float av = x[(bi * M + m) * K + k];
        const float* yr = &y[(bi * K + k) * N];
        for (int64_t n = 0; n < N; ++n) o[n] += av * yr[n];
      }
    }
  std::vector<int64_t> shape = a.shape;
  shape[rank - 1] = N;
  return from_f32(a.dtype, std::move(shape), std::move(out));
}

HostTensor addmm(const HostTensor& self, const HostTensor& m1, const HostTensor& m2, double beta, double alpha) {
  if (m1.shape.size() != 2) throw KernelError("addmm: mat1 must be 2-D");
  const HostTensor prod = matmul(m1, m2);
  if (broadcast_shapes(self.shape, prod.shape) != prod.shape) throw KernelError("addmm: self does not broadcast to the product");
  std::vector<float> out(static_cast<size_t>(prod.numel()));
  for_each_broadcast(prod.shape, {&prod.shape, &self.shape}, [&](int64_t o, const int64_t* in) {
    out[o] = static_cast<float>(beta * self.get_f(in[1]) + alpha * prod.get_f(in[0]));
  });
  return from_f32(m1.dtype, prod.shape, std::move(out));
}

}  // namespace vkc::kernels
