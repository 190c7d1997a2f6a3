#include "vkc/ir/half.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif

namespace vkc::ir {

float half_to_float(uint16_t h) {
  const uint32_t sign = (h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1f;
  uint32_t mant = h & 0x3ff;
  uint32_t bits;
  if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {  // subnormal: normalise
      exp = 127 - 15 + 1;
      while (!(mant & 0x400)) {
        mant <<= 1;
        --exp;
      }
      bits = sign | (exp << 23) | ((mant & 0x3ff) << 13);
    }
  } else {
    bits = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t float_to_half(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  const uint32_t abs = x & 0x7fffffffu;
  if (abs >= 0x7f800000u) return sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u : 0u);  // inf / nan
  if (abs >= 0x477ff000u) return sign | 0x7c00u;                                      // overflow
  if (abs < 0x38800000u) {                                                             // subnormal or zero
    if (abs < 0x33000000u) return sign;
    const uint32_t mant = (abs & 0x7fffffu) | 0x800000u;
    const int shift = 126 - static_cast<int>(abs >> 23);  // 14..24: units of 2^-24
    uint32_t half = mant >> shift;
    const uint32_t rem = mant & ((1u << shift) - 1);
    const uint32_t mid = 1u << (shift - 1);
    if (rem > mid || (rem == mid && (half & 1))) ++half;
    return sign | static_cast<uint16_t>(half);
  }
  uint32_t half = ((abs - 0x38000000u) >> 13);
  const uint32_t rem = abs & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (half & 1))) ++half;
  return sign | static_cast<uint16_t>(half);
}

namespace {

uint16_t saturated(float x) { return std::isnan(x) ? float_to_half(x) : float_to_half(std::clamp(x, -65504.0f, 65504.0f)); }

#if defined(__x86_64__)
// Eight at a time: clamp, then round to nearest even (vcvtps2ph). A block holding a NaN goes through
// the scalar function, whose NaN is the canonical one.
__attribute__((target("avx,f16c"))) size_t convert_f16c(const float* in, uint16_t* out, size_t n) {
  const __m256 lo = _mm256_set1_ps(-65504.0f), hi = _mm256_set1_ps(65504.0f);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 x = _mm256_loadu_ps(in + i);
    if (_mm256_movemask_ps(_mm256_cmp_ps(x, x, _CMP_UNORD_Q)) != 0) {
      for (size_t k = i; k < i + 8; ++k) out[k] = saturated(in[k]);
      continue;
    }
    const __m128i h = _mm256_cvtps_ph(_mm256_min_ps(_mm256_max_ps(x, lo), hi), _MM_FROUND_TO_NEAREST_INT);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), h);
  }
  return i;
}

// Eight at a time (vcvtph2ps, exact); a block holding an infinity or NaN goes through the scalar
// function, which keeps a signalling NaN's payload as it is.
__attribute__((target("avx,f16c"))) size_t widen_f16c(const uint16_t* in, float* out, size_t n) {
  const __m128i exp = _mm_set1_epi16(0x7c00);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i));
    if (_mm_movemask_epi8(_mm_cmpeq_epi16(_mm_and_si128(h, exp), exp)) != 0) {
      for (size_t k = i; k < i + 8; ++k) out[k] = half_to_float(in[k]);
      continue;
    }
    _mm256_storeu_ps(out + i, _mm256_cvtph_ps(h));
  }
  return i;
}

// CPUID leaf 1: AVX (ECX 28), F16C (ECX 29), and the OS saving YMM state (OSXSAVE, ECX 27, then
// XCR0 bits 1 and 2). GCC's and clang's __builtin_cpu_supports do not agree on "f16c".
bool has_f16c() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return false;
  if (!(c & (1u << 27)) || !(c & (1u << 28)) || !(c & (1u << 29))) return false;
  unsigned lo = 0, hi = 0;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (lo & 0x6u) == 0x6u;
}
#endif

}  // namespace

namespace {

// out[i] = one(in[i]): the first elements by `fast` (F16C) where the CPU has it, the rest one at a time.
template <typename In, typename Out>
void convert(const In* in, Out* out, size_t n, [[maybe_unused]] size_t (*fast)(const In*, Out*, size_t), Out (*one)(In)) {
  size_t i = 0;
#if defined(__x86_64__)
  static const bool f16c = has_f16c();
  if (f16c) i = fast(in, out, n);
#endif
  for (; i < n; ++i) out[i] = one(in[i]);
}

#if !defined(__x86_64__)
constexpr size_t (*convert_f16c)(const float*, uint16_t*, size_t) = nullptr;
constexpr size_t (*widen_f16c)(const uint16_t*, float*, size_t) = nullptr;
#endif

}  // namespace

void floats_to_halves_saturated(const float* in, uint16_t* out, size_t n) { convert(in, out, n, convert_f16c, saturated); }

void halves_to_floats(const uint16_t* in, float* out, size_t n) { convert(in, out, n, widen_f16c, half_to_float); }

}  // namespace vkc::ir
