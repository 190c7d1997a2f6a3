#include "mask.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace vkc::passes::attention {

MaskKind classify_mask(const std::vector<float>& values, int64_t rows, int64_t keys, int64_t queries,
                       int64_t first_pos, bool allow_bias) {
  MaskKind kind;
  if (rows <= 0 || keys <= 0 || values.size() % static_cast<size_t>(rows * keys) != 0) {
    kind.reason = "its size does not fit its rows and keys";
    return kind;
  }
  if (rows == 1 && queries > 1) {
    kind.reason = fmt::format("it has one row for {} queries", queries);
    return kind;
  }
  int64_t full_upto = -1;  // the last position of a row that sees every key from 0: a window must exceed it
  for (size_t base = 0; base < values.size(); base += static_cast<size_t>(rows * keys))
    for (int64_t i = 0; i < rows; ++i) {
      const int64_t p = first_pos + (rows == 1 ? queries - 1 : i);
      const float* row = values.data() + base + i * keys;
      auto where = [&](int64_t j) { return fmt::format("row {}, column {}: {}", i, j, row[j]); };
      // Visible keys must be one run [lo, p]; the rest hidden.
      int64_t lo = -1;
      for (int64_t j = 0; j < keys; ++j) {
        const float x = row[j];
        const bool hidden = x <= kMaskedAtOrBelow, shown = x == 0.0f || (allow_bias && !hidden && std::isfinite(x));
        if (shown && x != 0.0f) kind.bias = true;
        if (!shown && !hidden) {
          kind.reason = fmt::format("it adds a bias, not only 0 and a large negative value ({})", where(j));
          return kind;
        }
        if (j > p && shown) {
          kind.reason = fmt::format("it is not causal ({})", where(j));
          return kind;
        }
        if (shown && lo < 0) lo = j;
        if (hidden && lo >= 0 && j <= p) {
          kind.reason = fmt::format("it hides a key inside the visible run ({})", where(j));
          return kind;
        }
      }
      if (p >= keys || lo < 0) {
        kind.reason = fmt::format("row {} (position {}) sees no key of {}", i, p, keys);
        return kind;
      }
      if (lo == 0) {
        full_upto = std::max(full_upto, p);
        continue;
      }
      const int64_t w = p - lo + 1;
      if (kind.window && kind.window != w) {
        kind.reason = fmt::format("its rows hide different spans (windows of {} and {} keys)", kind.window, w);
        return kind;
      }
      kind.window = w;
    }
  if (kind.window && kind.window <= full_upto)
    kind.reason = fmt::format("a row at position {} sees every key though others see a window of {}", full_upto,
                              kind.window);
  return kind;
}

}  // namespace vkc::passes::attention
