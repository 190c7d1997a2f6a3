#include "vkc/kernels/pool.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "float_io.h"

namespace vkc::kernels {
namespace {

struct Planes {
  int64_t planes, H, W, OH, OW;
  std::vector<int64_t> out_shape;
};

Planes planes_of(const HostTensor& x, const PoolParams& p, int64_t dil_h, int64_t dil_w) {
  const size_t rank = x.shape.size();
  if (rank != 3 && rank != 4) throw KernelError(fmt::format("pool2d: input rank {} (expected 3 or 4)", rank));
  for (int i = 0; i < 2; ++i)
    if (p.kernel[i] < 1 || p.stride[i] < 1 || p.padding[i] < 0)
      throw KernelError("pool2d: bad kernel/stride/padding");
  Planes s;
  s.H = x.shape[rank - 2];
  s.W = x.shape[rank - 1];
  s.planes = x.numel() / std::max<int64_t>(s.H * s.W, 1);
  s.OH = pool_output_size(s.H, p.kernel[0], p.padding[0], p.stride[0], dil_h, p.ceil_mode);
  s.OW = pool_output_size(s.W, p.kernel[1], p.padding[1], p.stride[1], dil_w, p.ceil_mode);
  if (s.OH <= 0 || s.OW <= 0) throw KernelError("pool2d: empty output");
  s.out_shape = x.shape;
  s.out_shape[rank - 2] = s.OH;
  s.out_shape[rank - 1] = s.OW;
  return s;
}

}  // namespace

int64_t pool_output_size(int64_t in, int64_t kernel, int64_t pad, int64_t stride, int64_t dilation, bool ceil_mode) {
  // span = in + 2 pad - dilation (kernel - 1) - 1 (+ stride - 1), checked: a program may claim any sizes.
  int64_t span = 0, reach = 0, pads = 0, k1 = 0;
  if (stride <= 0 || __builtin_mul_overflow(pad, int64_t{2}, &pads) || __builtin_add_overflow(in, pads, &span) ||
      __builtin_sub_overflow(kernel, int64_t{1}, &k1) || __builtin_mul_overflow(dilation, k1, &reach) ||
      __builtin_sub_overflow(span, reach, &span) || __builtin_sub_overflow(span, int64_t{1}, &span) ||
      (ceil_mode && __builtin_add_overflow(span, stride - 1, &span)) || span == INT64_MIN)
    throw KernelError("pool: window arithmetic overflows");
  int64_t out = (span >= 0 ? span / stride : -((-span - 1) / stride + 1)) + 1;  // floor(span / stride) + 1
  // The last window must start inside the input or the left padding.
  if (ceil_mode && (out - 1) * stride >= in + pad) --out;
  return out;
}

MaxPoolResult max_pool2d(const HostTensor& x, const PoolParams& p) {
  const Planes s = planes_of(x, p, p.dilation[0], p.dilation[1]);
  const std::vector<float> in = to_f32(x);
  std::vector<float> out = f32_buffer({s.planes, s.OH, s.OW});
  HostTensor idx = HostTensor::zeros(ir::DType::Int64, s.out_shape);
  for (int64_t c = 0; c < s.planes; ++c)
    for (int64_t oh = 0; oh < s.OH; ++oh)
      for (int64_t ow = 0; ow < s.OW; ++ow) {
        float best = -std::numeric_limits<float>::infinity();
        int64_t best_i = -1;
        for (int64_t kh = 0; kh < p.kernel[0]; ++kh) {
          const int64_t ih = oh * p.stride[0] - p.padding[0] + kh * p.dilation[0];
          if (ih < 0 || ih >= s.H) continue;
          for (int64_t kw = 0; kw < p.kernel[1]; ++kw) {
            const int64_t iw = ow * p.stride[1] - p.padding[1] + kw * p.dilation[1];
            if (iw < 0 || iw >= s.W) continue;
            const float v = in[(c * s.H + ih) * s.W + iw];
            if (best_i < 0 || v > best || std::isnan(v)) {
              best = v;
              best_i = ih * s.W + iw;
              if (std::isnan(v)) break;
            }
          }
        }
        const int64_t o = (c * s.OH + oh) * s.OW + ow;
        out[o] = best;
        idx.set_i(o, best_i);
      }
  return {from_f32(x.dtype, s.out_shape, std::move(out)), std::move(idx)};
}

HostTensor avg_pool2d(const HostTensor& x, const PoolParams& p, bool count_include_pad,
                      std::optional<int64_t> divisor_override) {
  const Planes s = planes_of(x, p, 1, 1);
  if (divisor_override && *divisor_override == 0) throw KernelError("avg_pool2d: divisor_override 0");
  const std::vector<float> in = to_f32(x);
  std::vector<float> out = f32_buffer({s.planes, s.OH, s.OW});
  for (int64_t c = 0; c < s.planes; ++c)
    for (int64_t oh = 0; oh < s.OH; ++oh)
      for (int64_t ow = 0; ow < s.OW; ++ow) {
        // Window clipped to the padded input, then to the input (ATen's avg_pool2d).
        int64_t h0 = oh * p.stride[0] - p.padding[0], w0 = ow * p.stride[1] - p.padding[1];
        int64_t h1 = std::min(h0 + p.kernel[0], s.H + p.padding[0]);
        int64_t w1 = std::min(w0 + p.kernel[1], s.W + p.padding[1]);
        const int64_t padded_size = (h1 - h0) * (w1 - w0);
        h0 = std::max<int64_t>(h0, 0);
        w0 = std::max<int64_t>(w0, 0);
        h1 = std::min(h1, s.H);
        w1 = std::min(w1, s.W);
        double sum = 0;
        for (int64_t ih = h0; ih < h1; ++ih)
          for (int64_t iw = w0; iw < w1; ++iw) sum += in[(c * s.H + ih) * s.W + iw];
        const int64_t divisor =
            divisor_override ? *divisor_override : count_include_pad ? padded_size : (h1 - h0) * (w1 - w0);
        out[(c * s.OH + oh) * s.OW + ow] = divisor > 0 ? static_cast<float>(sum / divisor) : 0.0f;
      }
  return from_f32(x.dtype, s.out_shape, std::move(out));
}

}  // namespace vkc::kernels
