// com.microsoft GroupQueryAttention (onnxruntime-genai's decoders) as the standard operators it
// computes; expand-microsoft-ops calls it.
#pragma once

#include "vkc/passes/pass.h"

namespace vkc::passes {

/// Rewrites GroupQueryAttention node `n` (static shapes) into standard operators in the forms
/// exporters write (HF rotate-half RoPE, grouped heads repeated by Expand, a scaled and masked
/// Softmax attention, presents as Concat(past, new) on the sequence axis), which fuse-rotary-embedding,
/// fuse-attention and use-kv-cache then handle as they do for other decoders. Returns false (and
/// leaves `n`) when its shapes are not static; throws PassError for what it cannot express.
bool expand_group_query_attention(ir::Graph& g, ir::Node* n, const PassContext& ctx);

}  // namespace vkc::passes
