#include "vkc/runtime/compare.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace vkc::runtime {

Comparison compare(const kernels::HostTensor& got, const kernels::HostTensor& expected, double rtol, double atol) {
  Comparison c;
  if (got.shape != expected.shape) {
    // Same element count (e.g. a scalar vs [1]) still compares; otherwise nothing does.
    c.shape_matches = false;
    if (got.numel() != expected.numel()) {
      c.mismatches = std::max(got.numel(), expected.numel());
      c.max_abs = c.max_rel = INFINITY;
      return c;
    }
  }
  for (int64_t i = 0; i < got.numel(); ++i) {
    const double g = got.get_f(i), e = expected.get_f(i);
    if (std::isnan(g) || std::isnan(e)) {
      if (std::isnan(g) != std::isnan(e)) {
        ++c.mismatches;
        c.max_abs = c.max_rel = INFINITY;
      }
      continue;
    }
    if (g == e) continue;  // equal infinities too
    const double d = std::fabs(g - e);
    c.max_abs = std::max(c.max_abs, d);
    if (e != 0) c.max_rel = std::max(c.max_rel, d / std::fabs(e));
    if (!(d <= atol + rtol * std::fabs(e))) ++c.mismatches;
  }
  return c;
}

Summary summarize(const kernels::HostTensor& t) {
  Summary s;
  double sum = 0;
  int64_t finite = 0;
  for (int64_t i = 0; i < t.numel(); ++i) {
    const double v = t.get_f(i);
    if (std::isnan(v)) { ++s.nan; continue; }
    if (std::isinf(v)) { ++s.inf; continue; }
    s.min = finite ? std::min(s.min, v) : v;
    s.max = finite ? std::max(s.max, v) : v;
    sum += v;
    ++finite;
  }
  s.mean = finite ? sum / static_cast<double>(finite) : 0;
  return s;
}

std::string describe(const kernels::HostTensor& t) {
  return fmt::format("{} [{}]", ir::dtype_name(t.dtype), fmt::join(t.shape, ","));
}

}  // namespace vkc::runtime
