// Float staging for the neural-network kernels: they compute in fp32 on plain arrays and
// store the result in the input's dtype (so an fp16 tensor is rounded only where stored).
#pragma once

#include <cstring>
#include <vector>

#include "vkc/kernels/host_tensor.h"

namespace vkc::kernels {

/// All elements of x as fp32 (a copy; any numeric dtype).
inline std::vector<float> to_f32(const HostTensor& x) {
  std::vector<float> out(static_cast<size_t>(x.numel()));
  if (x.dtype == ir::DType::Float32) {
    if (!out.empty()) std::memcpy(out.data(), x.data.data(), out.size() * sizeof(float));
  } else {
    for (int64_t i = 0; i < x.numel(); ++i) out[i] = static_cast<float>(x.get_f(i));
  }
  return out;
}

/// A tensor of `dtype` and `shape` holding `values` (converted, rounded for fp16).
inline HostTensor from_f32(ir::DType dtype, std::vector<int64_t> shape, std::vector<float> values) {
  if (dtype == ir::DType::Float32) return HostTensor::of(dtype, std::move(shape), values);
  HostTensor out = HostTensor::zeros(dtype, std::move(shape));
  for (size_t i = 0; i < values.size(); ++i) out.set_f(static_cast<int64_t>(i), values[i]);
  return out;
}

}  // namespace vkc::kernels
