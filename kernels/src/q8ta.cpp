#include "vkc/kernels/q8ta.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace vkc::kernels {
namespace {

void check_int8(const HostTensor& t, const char* op, const char* what) {
  if (t.dtype != ir::DType::Int8) throw KernelError(fmt::format("{}: {} must be int8", op, what));
}

void check_params(QParams q, const char* op) {
  if (!(q.scale > 0) || !std::isfinite(q.scale) || q.zero_point < -128 || q.zero_point > 127)
    throw KernelError(fmt::format("{}: scale {} / zero point {} out of range", op, q.scale, q.zero_point));
}

const int8_t* i8(const HostTensor& t) { return reinterpret_cast<const int8_t*>(t.data.data()); }

double value_at(const HostTensor* t, int64_t i) { return t ? t->get_f(i) : 0.0; }

}  // namespace

int8_t requantize(double real, QParams q) {
  const double r = std::nearbyint(real / q.scale);  // the default rounding mode: half to even
  const double v = std::clamp(r + static_cast<double>(q.zero_point), -128.0, 127.0);
  return static_cast<int8_t>(v == v ? v : static_cast<double>(q.zero_point));
}

HostTensor quantize_per_tensor(const HostTensor& x, QParams q, int64_t qmin, int64_t qmax) {
  check_params(q, "quantize_per_tensor");
  if (qmin < -128 || qmax > 127 || qmin > qmax) throw KernelError("quantize_per_tensor: range must lie in int8");
  HostTensor out = HostTensor::zeros(ir::DType::Int8, x.shape);
  auto* o = reinterpret_cast<int8_t*>(out.mutable_bytes());
  for (int64_t i = 0; i < x.numel(); ++i) {
    const double r = std::nearbyint(x.get_f(i) / q.scale) + static_cast<double>(q.zero_point);
    o[i] = static_cast<int8_t>(r == r ? std::clamp(r, double(qmin), double(qmax)) : double(q.zero_point));
  }
  return out;
}

HostTensor dequantize_per_tensor(const HostTensor& q, QParams p) {
  check_int8(q, "dequantize_per_tensor", "the input");
  check_params(p, "dequantize_per_tensor");
  HostTensor out = HostTensor::zeros(ir::DType::Float32, q.shape);
  auto* o = reinterpret_cast<float*>(out.mutable_bytes());
  const int8_t* v = i8(q);
  const auto s = static_cast<float>(p.scale);
  for (int64_t i = 0; i < q.numel(); ++i) o[i] = static_cast<float>(v[i] - p.zero_point) * s;
  return out;
}

HostTensor q8ta_conv2d(const HostTensor& x, QParams in, const HostTensor& weights, const HostTensor& scales,
                       const HostTensor* bias, QParams out, const Q8taConv& c, int64_t OC) {
  const char* op = "q8ta_conv2d";
  check_int8(x, op, "the input");
  check_int8(weights, op, "the weights");
  check_params(in, op);
  check_params(out, op);
  if (x.shape.size() != 4 || x.shape[0] != 1) throw KernelError("q8ta_conv2d: the input must be [1, C, H, W]");
  if (c.kernel.size() != 2 || c.stride.size() != 2 || c.padding.size() != 2 || c.dilation.size() != 2)
    throw KernelError("q8ta_conv2d: kernel_size, stride, padding and dilation need 2 values each");
  const int64_t C = x.shape[1], H = x.shape[2], W = x.shape[3], KH = c.kernel[0], KW = c.kernel[1];
  for (int j = 0; j < 2; ++j)
    if (c.kernel[j] < 1 || c.stride[j] < 1 || c.dilation[j] < 1 || c.padding[j] < 0 || c.kernel[j] > 4096 ||
        c.stride[j] > 4096 || c.dilation[j] > 4096 || c.padding[j] > 4096)
      throw KernelError("q8ta_conv2d: kernel, stride, dilation or padding out of range");
  const int64_t G = c.groups;
  if (G < 1 || C % G != 0 || OC < 1 || OC % G != 0) throw KernelError(fmt::format("{}: {} -> {} channels in {} groups", op, C, OC, G));
  const int64_t Cg = C / G, OCg = OC / G;
  const int64_t OH = (H + 2 * c.padding[0] - c.dilation[0] * (KH - 1) - 1) / c.stride[0] + 1;
  const int64_t OW = (W + 2 * c.padding[1] - c.dilation[1] * (KW - 1) - 1) / c.stride[1] + 1;
  if (OH < 1 || OW < 1) throw KernelError("q8ta_conv2d: the output would be empty");
  const bool dw = c.kind == Q8taConvKind::Depthwise;
  if (dw && (Cg != 1 || OC != C)) throw KernelError("q8ta_conv2d_dw: groups must equal the channels");
  // Weight element (oc, kh, kw, ic within the group).
  int64_t row = 0;
  if (dw) {
    if (weights.shape.size() != 3 || weights.shape[0] != KH || weights.shape[1] != KW || weights.shape[2] < OC)
      throw KernelError("q8ta_conv2d_dw: weights must be [KH, KW, >= OC]");
  } else {
    row = KH * KW * Cg;
    if (weights.shape.size() != 2 || weights.shape[0] != OC || weights.shape[1] < row)
      throw KernelError(fmt::format("{}: weights must be [{}, >= {}]", op, OC, row));
  }
  if (scales.numel() < OC || (bias && bias->numel() < OC))
    throw KernelError("q8ta_conv2d: scales and bias need one value per output channel");
  const int8_t* xs = i8(x);
  const int8_t* ws = i8(weights);
  HostTensor y = HostTensor::zeros(ir::DType::Int8, {1, OC, OH, OW});
  auto* ys = reinterpret_cast<int8_t*>(y.mutable_bytes());
  for (int64_t oc = 0; oc < OC; ++oc) {
    const int64_t g = oc / OCg;
    const double mult = in.scale * scales.get_f(oc), b = value_at(bias, oc);
    for (int64_t oh = 0; oh < OH; ++oh)
      for (int64_t ow = 0; ow < OW; ++ow) {
        int64_t acc = 0;
        for (int64_t kh = 0; kh < KH; ++kh) {
          const int64_t ih = oh * c.stride[0] - c.padding[0] + kh * c.dilation[0];
          if (ih < 0 || ih >= H) continue;
          for (int64_t kw = 0; kw < KW; ++kw) {
            const int64_t iw = ow * c.stride[1] - c.padding[1] + kw * c.dilation[1];
            if (iw < 0 || iw >= W) continue;
            for (int64_t i = 0; i < Cg; ++i) {
              const int64_t ic = g * Cg + i;
              const int64_t w = dw ? ws[(kh * KW + kw) * weights.shape[2] + oc] : ws[oc * weights.shape[1] + (kh * KW + kw) * Cg + i];
              acc += (xs[(ic * H + ih) * W + iw] - in.zero_point) * w;
            }
          }
        }
        double real = static_cast<double>(acc) * mult + b;
        if (c.relu) real = std::max(real, 0.0);
        ys[(oc * OH + oh) * OW + ow] = requantize(real, out);
      }
  }
  return y;
}

HostTensor q8ta_linear(const HostTensor& x, QParams in, const HostTensor& weights, const HostTensor& scales,
                       const HostTensor* bias, QParams out, bool relu, int64_t N) {
  const char* op = "q8ta_linear";
  check_int8(x, op, "the input");
  check_int8(weights, op, "the weights");
  check_params(in, op);
  check_params(out, op);
  if (x.shape.empty()) throw KernelError("q8ta_linear: the input needs a rank");
  const int64_t K = x.shape.back(), M = K ? x.numel() / K : 0;
  if (weights.shape.size() != 2 || weights.shape[0] != N || weights.shape[1] < K)
    throw KernelError(fmt::format("{}: weights must be [{}, >= {}]", op, N, K));
  if (scales.numel() < N || (bias && bias->numel() < N)) throw KernelError("q8ta_linear: scales and bias need N values");
  std::vector<int64_t> shape = x.shape;
  shape.back() = N;
  HostTensor y = HostTensor::zeros(ir::DType::Int8, shape);
  auto* ys = reinterpret_cast<int8_t*>(y.mutable_bytes());
  const int8_t* xs = i8(x);
  const int8_t* ws = i8(weights);
  const int64_t ld = weights.shape[1];
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      int64_t acc = 0;
      for (int64_t k = 0; k < K; ++k) acc += (xs[m * K + k] - in.zero_point) * ws[n * ld + k];
      double real = static_cast<double>(acc) * in.scale * scales.get_f(n) + value_at(bias, n);
      if (relu) real = std::max(real, 0.0);
      ys[m * N + n] = requantize(real, out);
    }
  return y;
}

HostTensor q8ta_add(const HostTensor& a, QParams qa, const HostTensor& b, QParams qb, QParams out, double alpha) {
  check_int8(a, "q8ta_add", "input a");
  check_int8(b, "q8ta_add", "input b");
  check_params(qa, "q8ta_add");
  check_params(qb, "q8ta_add");
  check_params(out, "q8ta_add");
  if (a.shape != b.shape) throw KernelError("q8ta_add: the inputs must have one shape");
  HostTensor y = HostTensor::zeros(ir::DType::Int8, a.shape);
  auto* ys = reinterpret_cast<int8_t*>(y.mutable_bytes());
  for (int64_t i = 0; i < a.numel(); ++i)
    ys[i] = requantize(static_cast<double>(i8(a)[i] - qa.zero_point) * qa.scale +
                           alpha * static_cast<double>(i8(b)[i] - qb.zero_point) * qb.scale,
                       out);
  return y;
}

HostTensor q8ta_relu(const HostTensor& x, QParams in, QParams out) {
  check_int8(x, "q8ta_relu", "the input");
  check_params(in, "q8ta_relu");
  check_params(out, "q8ta_relu");
  HostTensor y = HostTensor::zeros(ir::DType::Int8, x.shape);
  auto* ys = reinterpret_cast<int8_t*>(y.mutable_bytes());
  for (int64_t i = 0; i < x.numel(); ++i)
    ys[i] = requantize(std::max(0.0, static_cast<double>(i8(x)[i] - in.zero_point) * in.scale), out);
  return y;
}

}  // namespace vkc::kernels
