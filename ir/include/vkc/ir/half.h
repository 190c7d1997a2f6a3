// IEEE 754 binary16 conversions.
#pragma once

#include <cstddef>
#include <cstdint>

namespace vkc::ir {

float half_to_float(uint16_t h);
/// Round to nearest even; values beyond the fp16 range become +-inf (clamp first to avoid that).
uint16_t float_to_half(float f);

}  // namespace vkc::ir

namespace vkc::ir {

/// out[i] = float_to_half(in[i] clamped to +-65504), NaN kept: the fp16 a weight becomes when a
/// program is compiled to fp16. The same bits as the scalar function; the CPU's F16C
/// instructions do the work where it has them.
void floats_to_halves_saturated(const float* in, uint16_t* out, size_t n);

/// out[i] = half_to_float(in[i]): the same bits as the scalar function (NaN payloads included); the
/// CPU's F16C instructions do the work where it has them (a decode step's f16 logits, 32000 of
/// them: 63 µs a token one at a time).
void halves_to_floats(const uint16_t* in, float* out, size_t n);

}  // namespace vkc::ir
