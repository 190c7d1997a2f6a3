// Reference kernels of ExecuTorch Vulkan's quantized operators, computed the plain way
// (dequantize, then multiply) so they check the packed layouts the compiler writes.
// int4 weights are packed two per byte along K: byte j of a row holds q[2j] + 8 in its low
// nibble and q[2j + 1] + 8 in its high nibble.
#pragma once

#include <utility>

#include "vkc/kernels/host_tensor.h"

namespace vkc::kernels {

/// ONNX DequantizeLinear: (x - zero_point) * scale as f32, x any integer dtype. scale (and zero_point, same
/// shape, optional) is a scalar (per tensor), 1-D along `axis` (per axis), or of x's rank with x's dims
/// divided by `block_size` along `axis` (blocked, opset 21).
HostTensor dequantize_linear(const HostTensor& x, const HostTensor& scale, const HostTensor* zero_point, int64_t axis,
                             int64_t block_size);

/// aten._weight_int8pack_mm: x[..., K] x (w[N, K] int8 * scales[N])^T.
HostTensor int8pack_mm(const HostTensor& x, const HostTensor& w, const HostTensor& scales);
/// et_vk.linear_q4gsw: x[..., K] x dequant(w)^T + bias; w packed [N, pad8(K) / 2], scales [G, >= N].
HostTensor linear_q4gsw(const HostTensor& x, const HostTensor& w, const HostTensor& scales, int64_t group,
                        const HostTensor* bias);
/// torchao.choose_qparams_affine, asymmetric, one block per row of the last dim: (scale, zero point)
/// with `scale_shape` / `zp_shape` as declared (one element per row).
std::pair<HostTensor, HostTensor> choose_qparams_per_row(const HostTensor& x, int64_t qmin, int64_t qmax, double eps,
                                                         std::vector<int64_t> scale_shape,
                                                         std::vector<int64_t> zp_shape);
/// et_vk.linear_dq8ca_q4gsw: x quantized per row with (scale, zero point) to int8, then
/// dequantized, times the int4 weights as in linear_q4gsw.
HostTensor linear_dq8ca_q4gsw(const HostTensor& x, const HostTensor& x_scale, const HostTensor& x_zp,
                              const HostTensor& w, const HostTensor& scales, int64_t group, const HostTensor* bias);
/// et_vk.embedding_q4gsw with linear-weight packing: rows of w [V, pad8(D) / 2] selected by
/// `indices`, dequantized with scales [V, D / group].
HostTensor embedding_q4gsw(const HostTensor& w, const HostTensor& scales, int64_t group, const HostTensor& indices);

}  // namespace vkc::kernels
