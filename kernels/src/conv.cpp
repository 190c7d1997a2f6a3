#include "vkc/kernels/conv.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "float_io.h"

namespace vkc::kernels {
namespace {

// Per-dim parameters for the 2-D loops (a 1-D conv is a 2-D one with H = 1).
struct Dims2 {
  int64_t stride[2], pad[2], dil[2], out_pad[2];
};

int64_t pick(const std::vector<int64_t>& v, size_t i, size_t spatial, const char* what) {
  if (v.size() == 1) return v[0];
  if (v.size() != spatial) throw KernelError(fmt::format("convolution: {} has {} values, expected {}", what, v.size(), spatial));
  return v[i];
}

Dims2 dims2(const ConvParams& p, size_t spatial) {
  Dims2 d{{1, 1}, {0, 0}, {1, 1}, {0, 0}};
  for (size_t i = 0; i < spatial; ++i) {
    const size_t j = i + 2 - spatial;  // 1-D fills the W slot
    d.stride[j] = pick(p.stride, i, spatial, "stride");
    d.pad[j] = pick(p.padding, i, spatial, "padding");
    d.dil[j] = pick(p.dilation, i, spatial, "dilation");
    d.out_pad[j] = p.transposed ? pick(p.output_padding, i, spatial, "output_padding") : 0;
    constexpr int64_t kMax = int64_t{1} << 24;
    if (d.stride[j] < 1 || d.dil[j] < 1 || d.stride[j] > kMax || d.dil[j] > kMax || d.pad[j] < 0 || d.pad[j] > kMax ||
        d.out_pad[j] < 0 || d.out_pad[j] > kMax)
      throw KernelError(fmt::format("convolution: stride {}, dilation {}, padding {}, output padding {} out of range",
                                    d.stride[j], d.dil[j], d.pad[j], d.out_pad[j]));
  }
  return d;
}

// The outputs ow in [lo, hi) whose input column ow * stride + off lies in [0, W).
std::pair<int64_t, int64_t> valid_range(int64_t off, int64_t stride, int64_t W, int64_t OW) {
  int64_t lo = off >= 0 ? 0 : (-off + stride - 1) / stride;
  int64_t hi = W - 1 - off < 0 ? 0 : (W - 1 - off) / stride + 1;
  return {std::min(lo, OW), std::min(hi, OW)};
}

}  // namespace

HostTensor convolution(const HostTensor& x, const HostTensor& weight, const HostTensor* bias, const ConvParams& p) {
  const size_t rank = x.shape.size();
  if ((rank != 3 && rank != 4) || weight.shape.size() != rank)
    throw KernelError(fmt::format("convolution: input rank {} / weight rank {} (expected both 3 or both 4)", rank,
                                  weight.shape.size()));
  const size_t spatial = rank - 2;
  const Dims2 d = dims2(p, spatial);
  const int64_t N = x.shape[0], C = x.shape[1];
  const int64_t H = spatial == 2 ? x.shape[2] : 1, W = x.shape[rank - 1];
  const int64_t KH = spatial == 2 ? weight.shape[2] : 1, KW = weight.shape[rank - 1];
  const int64_t G = p.groups;
  if (G < 1 || C % G != 0) throw KernelError(fmt::format("convolution: {} channels in {} groups", C, G));
  const int64_t cin_g = C / G;
  int64_t cout, cout_g, OH, OW;
  if (!p.transposed) {
    if (weight.shape[1] != cin_g) throw KernelError("convolution: weight dim 1 != input channels / groups");
    cout = weight.shape[0];
    cout_g = cout / G;
    OH = (H + 2 * d.pad[0] - d.dil[0] * (KH - 1) - 1) / d.stride[0] + 1;
    OW = (W + 2 * d.pad[1] - d.dil[1] * (KW - 1) - 1) / d.stride[1] + 1;
  } else {
    if (weight.shape[0] != C) throw KernelError("transposed convolution: weight dim 0 != input channels");
    cout_g = weight.shape[1];
    cout = cout_g * G;
    OH = (H - 1) * d.stride[0] - 2 * d.pad[0] + d.dil[0] * (KH - 1) + d.out_pad[0] + 1;
    OW = (W - 1) * d.stride[1] - 2 * d.pad[1] + d.dil[1] * (KW - 1) + d.out_pad[1] + 1;
  }
  if (OH <= 0 || OW <= 0) throw KernelError("convolution: empty output");
  if (bias && bias->numel() != cout) throw KernelError("convolution: bias size != output channels");

  const std::vector<float> in = to_f32(x), w = to_f32(weight);
  const std::vector<float> b = bias ? to_f32(*bias) : std::vector<float>(cout, 0.0f);
  std::vector<float> out = f32_buffer({N, cout, OH, OW});
  for (int64_t n = 0; n < N; ++n)
    for (int64_t oc = 0; oc < cout; ++oc)
      for (int64_t i = 0; i < OH * OW; ++i) out[(n * cout + oc) * OH * OW + i] = b[oc];

  for (int64_t n = 0; n < N; ++n) {
    for (int64_t g = 0; g < G; ++g) {
      for (int64_t ocg = 0; ocg < cout_g; ++ocg) {
        const int64_t oc = g * cout_g + ocg;
        float* o = &out[(n * cout + oc) * OH * OW];
        for (int64_t icg = 0; icg < cin_g; ++icg) {
          const int64_t ic = g * cin_g + icg;
          const float* src = &in[(n * C + ic) * H * W];
          for (int64_t kh = 0; kh < KH; ++kh) {
            for (int64_t kw = 0; kw < KW; ++kw) {
              const float wv = p.transposed ? w[((ic * cout_g + ocg) * KH + kh) * KW + kw]
                                            : w[((oc * cin_g + icg) * KH + kh) * KW + kw];
              if (!p.transposed) {
                // out[oh][ow] += w * in[oh*s - p + kh*d][ow*s - p + kw*d]
                for (int64_t oh = 0; oh < OH; ++oh) {
                  const int64_t ih = oh * d.stride[0] - d.pad[0] + kh * d.dil[0];
                  if (ih < 0 || ih >= H) continue;
                  const int64_t off = kw * d.dil[1] - d.pad[1];
                  const auto [lo, hi] = valid_range(off, d.stride[1], W, OW);
                  const float* row = src + ih * W;
                  float* orow = o + oh * OW;
                  for (int64_t ow = lo; ow < hi; ++ow) orow[ow] += wv * row[ow * d.stride[1] + off];
                }
              } else {
                // in[ih][iw] scatters to out[ih*s - p + kh*d][iw*s - p + kw*d]
                for (int64_t ih = 0; ih < H; ++ih) {
                  const int64_t oh = ih * d.stride[0] - d.pad[0] + kh * d.dil[0];
                  if (oh < 0 || oh >= OH) continue;
                  for (int64_t iw = 0; iw < W; ++iw) {
                    const int64_t ow = iw * d.stride[1] - d.pad[1] + kw * d.dil[1];
                    if (ow >= 0 && ow < OW) o[oh * OW + ow] += wv * src[ih * W + iw];
                  }
                }
              }
            }
          }
        }
      }
    }
  }
  std::vector<int64_t> shape = {N, cout};
  if (spatial == 2) shape.push_back(OH);
  shape.push_back(OW);
  return from_f32(x.dtype, std::move(shape), std::move(out));
}

}  // namespace vkc::kernels
