// 2-D resize CPU reference kernels (aten.upsample_nearest2d.vec / upsample_bilinear2d.vec semantics).
#pragma once

#include <optional>

#include "vkc/kernels/host_tensor.h"

namespace vkc::kernels {

/// The target of an upsample: output sizes (H, W), plus the scale factors when the op was given
/// scales instead of sizes (ATen then maps coordinates with 1 / scale rather than in / out).
struct UpsampleTarget {
  int64_t out_h = 0, out_w = 0;
  std::optional<double> scale_h, scale_w;
};

/// Builds the target from exactly one of output_size (2 values) or scale_factors (2 values).
UpsampleTarget upsample_target(const std::vector<int64_t>& in_shape, const std::optional<std::vector<int64_t>>& output_size,
                               const std::optional<std::vector<double>>& scale_factors);

/// Input [..., H, W]. Source index floor(dst * scale), clamped to the input.
HostTensor upsample_nearest2d(const HostTensor& x, const UpsampleTarget& t);
/// Input [..., H, W]. Half-pixel source coordinates clamped at 0, or align_corners.
HostTensor upsample_bilinear2d(const HostTensor& x, const UpsampleTarget& t, bool align_corners);

/// aten.grid_sampler_2d / ONNX GridSample: x [N, C, H, W] sampled at grid [N, Ho, Wo, 2] (x, y in
/// [-1, 1]) -> [N, C, Ho, Wo]. mode 0 bilinear, 1 nearest (half to even); padding 0 zeros,
/// 1 border, 2 reflection.
HostTensor grid_sample(const HostTensor& x, const HostTensor& grid, int mode, int padding, bool align_corners);

}  // namespace vkc::kernels
