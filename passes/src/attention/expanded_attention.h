// The attention core the contrib expansions (GroupQueryAttention, Attention, MultiHeadAttention)
// write, one form for all: the past prepended to this call's keys and values, and
// Softmax(Q K^T * scale [soft-capped] + one additive mask) V, the pattern fuse-attention makes
// et_vk.sdpa (and use-kv-cache reads its presents from).
#pragma once

#include <utility>
#include <vector>

#include "expand_builder.h"

namespace vkc::passes {

/// Softmax(q k^T * scale + masks) v for q [B, H, S, D], k [B, H, T, D], v [B, H, T, Dv] (static), as
/// [B, S, H * Dv]. The masks (null entries skipped; each rank 4, broadcasting to [B, H, S, T]) are
/// summed first into one additive mask; softcap > 0 caps the scaled scores (cap * tanh(x / cap))
/// before it is added.
ir::Value* scaled_attention(ExpandBuilder& b, ir::Value* q, ir::Value* k, ir::Value* v,
                            const std::vector<ir::Value*>& masks, double scale, double softcap = 0.0);

/// (Concat(past_key, k), Concat(past_value, v)) on the sequence axis, or (k, v) without a past. Throws
/// for node `n` when only one past is given or a past is not [B, H, P, D] like the new ones.
std::pair<ir::Value*, ir::Value*> append_past(ExpandBuilder& b, const ir::Node* n, ir::Value* past_key,
                                              ir::Value* past_value, ir::Value* k, ir::Value* v);

}  // namespace vkc::passes
