// Additive attention masks read by what they mean, not by how an exporter spelled them. A value at
// or below kMaskedAtOrBelow hides a key (float32's or float16's lowest, -inf, -1e9, -1e4 ...:
// every exporter's "minus infinity"), 0 shows it; any other value is a bias, which the fused cache
// operator cannot keep (the state-cache path can, when the graph computes it from input_pos). A mask is classified over query rows at known positions: causal (each query sees
// every key up to its own position), causal with a sliding window of W keys (it sees keys
// (p - W, p]), or neither (the reason says where).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace vkc::passes::attention {

/// At or below this a mask value hides its key (fp16's lowest is -65504; transformers uses the
/// dtype's lowest, older exports -1e4 or -1e9).
inline constexpr float kMaskedAtOrBelow = -1e4f;

struct MaskKind {
  /// 0: plain causal as far as the rows show (no row sees fewer keys than its position allows);
  /// else each query at position p sees keys (p - window, p].
  int64_t window = 0;
  /// Empty when the mask is causal (windowed or not); else why not ("row 2, column 5: -0.5").
  std::string reason;
  /// Visible keys get values other than 0 (a position bias, as T5's relative one), which
  /// classify_mask allows only when asked to.
  bool bias = false;
};

/// Classifies `values`, a mask whose last two dims are [rows, keys] (rows: the queries, or 1 for
/// a mask that broadcasts over them; any leading dims are checked alike), for queries whose
/// first is at position `first_pos` among `keys` key positions. `rows` 1 with several queries
/// (`queries` > 1) stands for the last query only. `allow_bias`: a visible key may get any value
/// above kMaskedAtOrBelow (the kind's `bias` says whether one did); else only 0.
MaskKind classify_mask(const std::vector<float>& values, int64_t rows, int64_t keys, int64_t queries,
                       int64_t first_pos, bool allow_bias = false);

}  // namespace vkc::passes::attention
