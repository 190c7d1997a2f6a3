// IEEE 754 binary16 conversions.
#pragma once

#include <cstdint>

namespace vkc::ir {

float half_to_float(uint16_t h);
/// Round to nearest even; values beyond the fp16 range become +-inf (clamp first to avoid that).
uint16_t float_to_half(float f);

}  // namespace vkc::ir
