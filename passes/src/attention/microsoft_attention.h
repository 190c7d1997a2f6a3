// com.microsoft GroupQueryAttention and RotaryEmbedding (onnxruntime-genai's decoders, onnxruntime's
// fused LLM graphs), Attention and MultiHeadAttention (onnxruntime's transformer optimizer) as the
// standard operators they compute; expand-microsoft-ops calls them.
#pragma once

#include "vkc/passes/pass.h"

namespace vkc::passes {

/// Rewrites GroupQueryAttention node `n` (static shapes) into standard operators in the forms
/// exporters write (HF rotate-half RoPE, grouped heads repeated by Expand, a scaled and masked
/// Softmax attention, presents as Concat(past, new) on the sequence axis), which fuse-rotary-embedding,
/// fuse-attention and use-kv-cache then handle as they do for other decoders. Returns false (and
/// leaves `n`) when its shapes are not static; throws PassError for what it cannot express.
bool expand_group_query_attention(ir::Graph& g, ir::Node* n, const PassContext& ctx);

/// Rewrites RotaryEmbedding node `n` (x [B, S, W] or [B, H, S, D], position_ids [B, S] or a start
/// [1], cos_cache / sin_cache [max, R/2]) as HF rotate-half (or pairwise, when interleaved) RoPE over
/// the first R channels of each head. Returns false (and leaves `n`) when its shapes are not static.
bool expand_rotary_embedding(ir::Graph& g, ir::Node* n);

/// Rewrites onnxruntime's Attention node `n` (packed QKV weights, mask index or raw mask, past
/// [2, B, N, P, H], attention_bias, unidirectional) into standard operators
/// (microsoft_bert_attention.cpp says how). Returns false (and leaves `n`) when its shapes are not
/// static; throws PassError for what it cannot express.
bool expand_attention(ir::Graph& g, ir::Node* n);

/// Rewrites onnxruntime's MultiHeadAttention node `n` (separate, packed QKV or packed KV inputs,
/// per-head cross-attention keys, key-padding mask, attention_bias, past_key / past_value) likewise.
bool expand_multi_head_attention(ir::Graph& g, ir::Node* n);

}  // namespace vkc::passes
