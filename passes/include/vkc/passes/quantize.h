// Weight quantization recipes (`vkc compile --quantize RECIPE`) and what the
// quantize-weights pass reports per layer. See docs/options.md "Quantization".
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace vkc::passes {

enum class QuantScheme {
  None,
  Int8DynAct4Weight,  // 8da4w: int8 dynamic per-row activations x int4 grouped weights
  Int4WeightOnly,     // int4-weight-only: int4 grouped weights, fp activations
  Int8WeightOnly,     // int8-weight-only: int8 per-channel weights
};

struct QuantRecipe {
  QuantScheme scheme = QuantScheme::None;
  /// Group size of int4 linear weights (input channels per scale).
  int64_t group_size = 0;
  /// "-embedding": embedding tables as 4-bit grouped weights (et_vk.embedding_q4gsw).
  bool embedding = false;
  int64_t embedding_group_size = 32;
  /// "-fp16": the compile runs with force_fp16.
  bool force_fp16 = false;
  /// The recipe as written.
  std::string text;

  bool enabled() const { return scheme != QuantScheme::None || embedding; }
};

/// Parses `BASE[:GROUP][-fp16][-embedding]` with BASE one of 8da4w (group 128 by default, as
/// ExecuTorch's quantize.py), int4-weight-only (256), int8-weight-only (per channel, no group).
/// Throws std::invalid_argument with a one-line message naming the problem.
QuantRecipe parse_quant_recipe(std::string_view text);

/// Group sizes the int4 recipes accept.
inline constexpr int64_t kQuantGroupSizes[] = {32, 64, 128, 256};
/// Layers with fewer weight elements stay in floating point: their bytes do not matter and
/// tiny projections (heads, gates) are the most sensitive to quantization error.
inline constexpr int64_t kMinQuantizedElements = 16384;

/// What the pass does: the recipe and --quantize-exclude globs (matched on node and weight names).
/// The default of QuantConfig::kept_packed_bytes.
inline constexpr int64_t kKeptPackedBytes = int64_t{512} << 20;

struct QuantConfig {
  QuantRecipe recipe;
  std::vector<std::string> exclude;
  /// --quantize-min-elements: linears with fewer weight elements stay in floating point.
  int64_t min_elements = kMinQuantizedElements;
  /// Quantized bytes a compile holds in memory: every layer's scales and sums, then packed int4
  /// weights, the smallest layers first; the packed weights of the layers beyond are quantized
  /// again, a block of rows at a time, when the program is hashed and written (the same bytes), so
  /// memory stays bounded at any model size.
  int64_t kept_packed_bytes = kKeptPackedBytes;
};

/// One candidate layer (a linear with a constant weight, or an embedding table).
struct QuantLayerReport {
  std::string node, weight;
  std::string kind;           // "linear" or "embedding"
  int64_t rows = 0, cols = 0;  // weight [N, K] (embedding: [V, D])
  bool quantized = false;
  std::string reason;         // why it was left in floating point
  std::string op;             // runtime operator it became
  int bits = 0;
  int64_t group_size = 0;     // 0: per channel
  int64_t padded_cols = 0;    // K padded with zero columns to a multiple of the group size (0: not padded)
  uint64_t bytes_before = 0;  // the weight as stored before (fp32)
  uint64_t bytes_after = 0;   // packed weight + scales (+ weight sums)
  double sqnr_db = 0;         // dequantized vs original weight (recipe layers)
  std::string source = "recipe";  // or the imported format: "MatMulNBits"
  bool zero_points = false;   // imported blocks with zero points other than the midpoint
};

}  // namespace vkc::passes
