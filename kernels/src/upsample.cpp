#include "vkc/kernels/upsample.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "float_io.h"

namespace vkc::kernels {
namespace {

struct Planes {
  int64_t planes, H, W;
};

Planes planes_of(const HostTensor& x) {
  if (x.shape.size() < 2) throw KernelError("upsample2d: input rank < 2");
  const int64_t H = x.shape[x.shape.size() - 2], W = x.shape.back();
  return {x.numel() / std::max<int64_t>(H * W, 1), H, W};
}

std::vector<int64_t> out_shape(const HostTensor& x, const UpsampleTarget& t) {
  std::vector<int64_t> s = x.shape;
  s[s.size() - 2] = t.out_h;
  s[s.size() - 1] = t.out_w;
  return s;
}

// ATen's area_pixel_compute_scale.
float pixel_scale(int64_t in, int64_t out, bool align_corners, std::optional<double> scale) {
  if (align_corners) return out > 1 ? static_cast<float>(in - 1) / static_cast<float>(out - 1) : 0.0f;
  if (scale && *scale > 0) return static_cast<float>(1.0 / *scale);
  return static_cast<float>(in) / static_cast<float>(out);
}

// ATen's nearest_idx.
int64_t nearest_index(int64_t dst, int64_t in, int64_t out, std::optional<double> scale) {
  if (out == in) return dst;
  if (out == 2 * in) return dst >> 1;
  const float s = pixel_scale(in, out, false, scale);
  return std::min(static_cast<int64_t>(std::floor(static_cast<float>(dst) * s)), in - 1);
}

struct Lerp {
  int64_t i0, i1;
  float l0, l1;
};

// ATen's area_pixel_compute_source_index + neighbour selection for linear interpolation.
Lerp lerp_of(int64_t dst, int64_t in, float scale, bool align_corners) {
  float src = align_corners ? scale * static_cast<float>(dst)
                            : std::max(scale * (static_cast<float>(dst) + 0.5f) - 0.5f, 0.0f);
  const int64_t i0 = std::min(static_cast<int64_t>(src), in - 1);
  const int64_t i1 = i0 + (i0 < in - 1 ? 1 : 0);
  const float l1 = std::min(src - static_cast<float>(i0), 1.0f);
  return {i0, i1, 1.0f - l1, l1};
}

}  // namespace

UpsampleTarget upsample_target(const std::vector<int64_t>& in_shape, const std::optional<std::vector<int64_t>>& output_size,
                               const std::optional<std::vector<double>>& scale_factors) {
  if (in_shape.size() < 2) throw KernelError("upsample2d: input rank < 2");
  const int64_t H = in_shape[in_shape.size() - 2], W = in_shape.back();
  UpsampleTarget t;
  if (output_size && !output_size->empty()) {
    if (output_size->size() != 2) throw KernelError("upsample2d: output_size needs 2 values");
    t.out_h = (*output_size)[0];
    t.out_w = (*output_size)[1];
  } else if (scale_factors && scale_factors->size() == 2) {
    t.scale_h = (*scale_factors)[0];
    t.scale_w = (*scale_factors)[1];
    t.out_h = float_to_int64(std::floor(static_cast<double>(H) * *t.scale_h));
    t.out_w = float_to_int64(std::floor(static_cast<double>(W) * *t.scale_w));
  } else {
    throw KernelError("upsample2d: needs output_size or 2 scale_factors");
  }
  if (t.out_h <= 0 || t.out_w <= 0) throw KernelError("upsample2d: empty output");
  return t;
}

HostTensor upsample_nearest2d(const HostTensor& x, const UpsampleTarget& t) {
  const Planes p = planes_of(x);
  const std::vector<float> in = to_f32(x);
  std::vector<float> out = f32_buffer({p.planes, t.out_h, t.out_w});
  for (int64_t c = 0; c < p.planes; ++c)
    for (int64_t oh = 0; oh < t.out_h; ++oh) {
      const int64_t ih = nearest_index(oh, p.H, t.out_h, t.scale_h);
      for (int64_t ow = 0; ow < t.out_w; ++ow)
        out[(c * t.out_h + oh) * t.out_w + ow] = in[(c * p.H + ih) * p.W + nearest_index(ow, p.W, t.out_w, t.scale_w)];
    }
  return from_f32(x.dtype, out_shape(x, t), std::move(out));
}

namespace {

// A normalized grid coordinate as a pixel coordinate of a side of `size`, after padding_mode
// (border: clamped; reflection: mirrored at the edges (align_corners) or the pixel borders).
double grid_pixel(double g, int64_t size, int padding, bool align_corners) {
  const double n = static_cast<double>(size);
  double v = align_corners ? (g + 1) / 2 * (n - 1) : ((g + 1) * n - 1) / 2;
  if (padding == 2) {
    const double lo = align_corners ? 0.0 : -0.5, span = align_corners ? n - 1 : n;
    if (span <= 0) return 0;
    const double d = std::abs(v - lo);
    const double extra = std::fmod(d, span);
    v = static_cast<int64_t>(std::floor(d / span)) % 2 == 0 ? lo + extra : lo + span - extra;
  }
  if (padding >= 1) v = std::clamp(v, 0.0, n - 1);
  return v;
}

}  // namespace

HostTensor grid_sample(const HostTensor& x, const HostTensor& grid, int mode, int padding, bool align_corners) {
  if (x.shape.size() != 4 || grid.shape.size() != 4 || grid.shape[3] != 2 || grid.shape[0] != x.shape[0])
    throw KernelError("grid_sample: input [N, C, H, W] and grid [N, Ho, Wo, 2] expected");
  if (mode < 0 || mode > 1 || padding < 0 || padding > 2) throw KernelError("grid_sample: unsupported mode or padding");
  const int64_t N = x.shape[0], C = x.shape[1], H = x.shape[2], W = x.shape[3], Ho = grid.shape[1], Wo = grid.shape[2];
  const std::vector<float> in = to_f32(x), g = to_f32(grid);
  std::vector<float> out = f32_buffer({N, C, Ho, Wo});
  auto at = [&](int64_t n, int64_t c, int64_t h, int64_t w) -> double {
    return h < 0 || h >= H || w < 0 || w >= W ? 0.0 : in[static_cast<size_t>(((n * C + c) * H + h) * W + w)];
  };
  for (int64_t n = 0; n < N; ++n)
    for (int64_t oh = 0; oh < Ho; ++oh)
      for (int64_t ow = 0; ow < Wo; ++ow) {
        const size_t gi = static_cast<size_t>(((n * Ho + oh) * Wo + ow) * 2);
        const double px = grid_pixel(g[gi], W, padding, align_corners);
        const double py = grid_pixel(g[gi + 1], H, padding, align_corners);
        for (int64_t c = 0; c < C; ++c) {
          double v;
          if (mode == 1) {
            v = at(n, c, static_cast<int64_t>(std::nearbyint(py)), static_cast<int64_t>(std::nearbyint(px)));
          } else {
            const double x0 = std::floor(px), y0 = std::floor(py), fx = px - x0, fy = py - y0;
            const auto ix = static_cast<int64_t>(x0), iy = static_cast<int64_t>(y0);
            v = (1 - fy) * ((1 - fx) * at(n, c, iy, ix) + fx * at(n, c, iy, ix + 1)) +
                fy * ((1 - fx) * at(n, c, iy + 1, ix) + fx * at(n, c, iy + 1, ix + 1));
          }
          out[static_cast<size_t>(((n * C + c) * Ho + oh) * Wo + ow)] = static_cast<float>(v);
        }
      }
  return from_f32(x.dtype, {N, C, Ho, Wo}, std::move(out));
}

HostTensor upsample_bilinear2d(const HostTensor& x, const UpsampleTarget& t, bool align_corners) {
  const Planes p = planes_of(x);
  const float sh = pixel_scale(p.H, t.out_h, align_corners, t.scale_h);
  const float sw = pixel_scale(p.W, t.out_w, align_corners, t.scale_w);
  const std::vector<float> in = to_f32(x);
  std::vector<float> out = f32_buffer({p.planes, t.out_h, t.out_w});
  for (int64_t c = 0; c < p.planes; ++c) {
    const float* src = &in[c * p.H * p.W];
    for (int64_t oh = 0; oh < t.out_h; ++oh) {
      const Lerp h = lerp_of(oh, p.H, sh, align_corners);
      for (int64_t ow = 0; ow < t.out_w; ++ow) {
        const Lerp w = lerp_of(ow, p.W, sw, align_corners);
        out[(c * t.out_h + oh) * t.out_w + ow] =
            h.l0 * (w.l0 * src[h.i0 * p.W + w.i0] + w.l1 * src[h.i0 * p.W + w.i1]) +
            h.l1 * (w.l0 * src[h.i1 * p.W + w.i0] + w.l1 * src[h.i1 * p.W + w.i1]);
      }
    }
  }
  return from_f32(x.dtype, out_shape(x, t), std::move(out));
}

}  // namespace vkc::kernels
