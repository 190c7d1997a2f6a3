// Reference kernels of ExecuTorch Vulkan's static-int8 (q8ta) operators, in integer arithmetic:
// activations are int8, per-tensor affine (real = (q - zero_point) * scale); weights are int8,
// symmetric per output channel. An operator accumulates sum((x - x_zp) * w) exactly in 64 bits,
// then rescales once: y = clamp(round_half_even(real / out_scale) + out_zp, -128, 127) with
// real = acc * x_scale * w_scale[oc] + bias[oc] (relu applied to real when asked), in double.
// Layouts are the ones ET-VK's export writes (custom_ops_lib.py, patterns/quantized_*.py).
#pragma once

#include <cstdint>
#include <vector>

#include "vkc/kernels/host_tensor.h"

namespace vkc::kernels {

/// Per-tensor affine parameters of an int8 activation.
struct QParams {
  double scale = 1.0;
  int64_t zero_point = 0;
};

/// quantized_decomposed.quantize_per_tensor: clamp(round_half_even(x / scale) + zp, qmin, qmax) as int8.
HostTensor quantize_per_tensor(const HostTensor& x, QParams q, int64_t qmin = -128, int64_t qmax = 127);
/// quantized_decomposed.dequantize_per_tensor: (q - zp) * scale as f32.
HostTensor dequantize_per_tensor(const HostTensor& q, QParams p);
/// The int8 value of a real number under `q` (the requantization every q8ta operator ends with).
int8_t requantize(double real, QParams q);

enum class Q8taConvKind { General, Depthwise, Pointwise };

struct Q8taConv {
  Q8taConvKind kind = Q8taConvKind::General;
  std::vector<int64_t> kernel, stride, padding, dilation;  // 2 values each
  int64_t groups = 1;
  bool relu = false;
};

/// et_vk.q8ta_conv2d / _dw / _pw on x [1, C, H, W] int8. Weights: general and pointwise
/// [OC, >= KH*KW*C/groups] (OHWI rows, padded), depthwise [KH, KW, >= OC]. scales and bias
/// (optional) have >= OC values. `out_channels` is OC.
HostTensor q8ta_conv2d(const HostTensor& x, QParams in, const HostTensor& weights, const HostTensor& scales,
                       const HostTensor* bias, QParams out, const Q8taConv& conv, int64_t out_channels);
/// et_vk.q8ta_linear(_gemv) on x [..., K] int8 with weights [N, >= K] int8, scales and bias >= N.
HostTensor q8ta_linear(const HostTensor& x, QParams in, const HostTensor& weights, const HostTensor& scales,
                       const HostTensor* bias, QParams out, bool relu, int64_t n);
/// et_vk.q8ta_add: a + alpha * b of two int8 tensors of one shape.
HostTensor q8ta_add(const HostTensor& a, QParams qa, const HostTensor& b, QParams qb, QParams out, double alpha);
/// et_vk.q8ta_relu.
HostTensor q8ta_relu(const HostTensor& x, QParams in, QParams out);

}  // namespace vkc::kernels
