// Normalization CPU reference kernels (aten.native_layer_norm, batch norm in inference mode).
#pragma once

#include "vkc/kernels/host_tensor.h"

namespace vkc::kernels {

struct LayerNormResult {
  HostTensor out;
  HostTensor mean, rstd;  // per normalized group, shaped like x with the normalized dims set to 1
};

/// Normalizes over the last `normalized_dims` dims; weight and bias (or null) have those dims' shape.
LayerNormResult layer_norm(const HostTensor& x, size_t normalized_dims, const HostTensor* weight,
                           const HostTensor* bias, double eps);

struct GroupNormResult {
  HostTensor out;
  HostTensor mean, rstd;  // [N, groups]
};

/// aten.native_group_norm: x [N, C, ...] normalized over each group of C / groups channels and
/// the spatial dims; weight and bias (or null) are per channel [C].
GroupNormResult group_norm(const HostTensor& x, const HostTensor* weight, const HostTensor* bias, int64_t groups,
                           double eps);

/// (x - mean) / sqrt(var + eps) * weight + bias per channel (dim 1); weight/bias may be null.
HostTensor batch_norm(const HostTensor& x, const HostTensor* weight, const HostTensor* bias,
                      const HostTensor& mean, const HostTensor& var, double eps);

}  // namespace vkc::kernels
