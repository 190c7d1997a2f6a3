// --max-seq-len without fusion: a concat-style cache kept as program state by update_cache, read by
// whatever the graph computes from it. Attention that sdpa_with_kv_cache cannot express (a
// sliding window, soft-capped scores, an attention left unfused) runs as the graph wrote it over
// all N cache rows, with the mask the graph computed for one position replaced by the same kind
// of mask computed at run time from input_pos (rows not yet written are hidden).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "kv_cache_pairs.h"
#include "mask.h"
#include "vkc/ir/graph.h"

namespace vkc::passes::attention {

/// `x` [A, B, C, D] as [A, C, B, D] (heads-first <-> sequence-first), inserted before `before`.
ir::Value* transpose12(ir::Graph& g, const ir::Node* before, ir::Value* x);

/// Keeps `pair`'s cache as state: update_cache writes the new rows at input_pos into a cache of
/// `n_max` rows, whose [1, Hkv, N, D] view replaces every use of the present.
void keep_cache_as_state(ir::Graph& g, const CachePair& pair, ir::Value* input_pos, int64_t n_max);

/// The additive mask [1, 1, S, N] (in `dtype`) that hides, for query i at input_pos + i, the keys
/// after it and, with a window, those `window` or more positions before it.
ir::Value* runtime_mask(ir::Graph& g, const ir::Node* before, ir::Value* input_pos, int64_t seq, int64_t n_max,
                        int64_t window, ir::DType dtype);

/// The values of `mask` where input_pos is `pos` (a constant's values, or what the graph computes
/// from input_pos there); empty when they cannot be had at compile time.
std::optional<std::vector<float>> mask_values(const ir::Value* mask, const ir::Value* input_pos, int64_t pos);

/// Gives every Softmax over the `n_max` keys of the state caches a run-time mask: the mask added
/// to its scores (a constant, or computed from input_pos) is classified and replaced; a one-token
/// step without one gets the causal one. Returns each softmax's name and window (0: none); throws
/// PassError naming a softmax whose mask cannot be read.
std::vector<std::pair<std::string, int64_t>> mask_state_attention(ir::Graph& g, ir::Value* input_pos, int64_t seq,
                                                                  int64_t n_max);

}  // namespace vkc::passes::attention
