// Every pass, one per file under src/. The pipeline (src/pipeline.cpp) orders them.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "vkc/passes/pass.h"

namespace vkc::passes {

/// Drops Identity and pass-through Dropout, rerouting their uses (a used mask becomes all true).
void remove_identity(ir::Graph& g, PassContext& ctx);
/// Whether a Dropout node passes its input through (inference mode, or a constant ratio of 0).
bool dropout_passes_through(const ir::Node* n);
/// Evaluates nodes whose inputs are constants (and Shape/Size of static shapes) with the CPU kernels.
void fold_constants(ir::Graph& g, PassContext& ctx);
/// Fills static shapes of ONNX nodes' outputs that import left unknown or symbolic, where
/// the inputs (and constant shape arguments) are now static. Returns whether anything changed.
/// fold-constants runs it between folding rounds. Nodes whose static input shapes the operator is
/// not defined for (the ONNX spec's contract broken: ranks, inner dims, element counts, channels)
/// are added to `contradictions` (node name -> why) when it is given.
bool propagate_shapes(ir::Graph& g, std::map<std::string, std::string>* contradictions = nullptr);
/// Rewrites operators the ONNX spec defines by others as those (src/decompose_ops.cpp).
void decompose_ops(ir::Graph& g, PassContext& ctx);
/// Rewrites Einsum of one or two operands as Transpose/Reshape/ReduceSum/MatMul (src/decompose_einsum.cpp).
void decompose_einsum(ir::Graph& g, PassContext& ctx);
/// Unrolls LSTM, GRU and RNN over a static sequence into Gemm/Slice/elementwise steps (src/decompose_rnn.cpp).
void decompose_rnn(ir::Graph& g, PassContext& ctx);
/// Rewrites onnxruntime's contrib operators as standard ones (src/expand_microsoft_ops.cpp).
void expand_microsoft_ops(ir::Graph& g, PassContext& ctx);
/// Rewrites QLinearConv/QLinearMatMul as DequantizeLinear -> op -> QuantizeLinear (src/expand_qlinear_ops.cpp).
void expand_qlinear_ops(ir::Graph& g, PassContext& ctx);
/// Lowers onnxruntime's dynamic quantization chains (src/lower_dynamic_quant.cpp).
void lower_dynamic_quant(ir::Graph& g, PassContext& ctx);
/// Removes QuantizeLinear -> DequantizeLinear round trips whose values are quantized again with the
/// same parameters after only order-preserving operators (src/drop_requantized_qdq.cpp).
void drop_requantized_qdq(ir::Graph& g, PassContext& ctx);
/// Fuses static-int8 QDQ patterns into ET-VK's q8ta operators on int8 activations (src/lower_q8ta.cpp).
void lower_q8ta(ir::Graph& g, PassContext& ctx);
/// Lowers QDQ (QuantizeLinear/DequantizeLinear) pairs and quantized constants (src/lower_qdq.cpp).
void lower_qdq(ir::Graph& g, PassContext& ctx);
/// Merges identical constants and identical nodes.
void eliminate_common_subexpressions(ir::Graph& g, PassContext& ctx);
/// Fuses the decomposed LayerNorm exporters write into one LayerNormalization.
void fuse_layer_norm(ir::Graph& g, PassContext& ctx);
/// Fuses the decomposed RMSNorm (x / sqrt(mean(x^2) + eps) * w) into et_vk.rms_norm.
void fuse_rms_norm(ir::Graph& g, PassContext& ctx);
/// Fuses HF rotate-half and pairwise (Meta) rotary embeddings into et_vk.apply_rotary_emb(_hf).
void fuse_rotary_embedding(ir::Graph& g, PassContext& ctx);
/// Fuses MatMul -> scale -> (mask) -> Softmax -> MatMul attention into et_vk.sdpa.
void fuse_attention(ir::Graph& g, PassContext& ctx);
void use_kv_cache(ir::Graph& g, PassContext& ctx);
/// Under --max-seq-len: float values computed from input_pos alone become lookups in constant tables.
void tabulate_positions(ir::Graph& g, PassContext& ctx);
/// Under --max-seq-len: a cache of keys and values in one [2, B, H, P, D] tensor (onnxruntime's GPT-2 Attention) becomes two caches.
void split_packed_cache(ir::Graph& g, PassContext& ctx);
/// Under --max-seq-len: a bool input that selects between a branch reading the caches and one that does not takes the first.
void take_cache_branch(ir::Graph& g, PassContext& ctx);
/// Under --max-seq-len N: an integer/bool input [1, N] (an attention mask) becomes a constant of ones.
void assume_unpadded_mask(ir::Graph& g, PassContext& ctx);
/// Under --max-seq-len, without a position-ids input: the positions computed from the cache length follow a new input_pos.
void keep_cache_positions(ir::Graph& g, PassContext& ctx);
/// Fuses the erf-form GELU decomposition into one Gelu.
void fuse_gelu(ir::Graph& g, PassContext& ctx);
/// Folds BatchNormalization into the Conv or Gemm that feeds it.
void fuse_batch_norm(ir::Graph& g, PassContext& ctx);
/// Turns ONNX operators into ExecuTorch Vulkan runtime operators where a lowering exists.
void lower_to_vulkan(ir::Graph& g, PassContext& ctx);
/// Materializes the [N, K] weights of linears still read through permute_copy(W [K, N]).
void fold_weight_transposes(ir::Graph& g, PassContext& ctx);
/// Clones graph outputs that folded to constants (plan outputs cannot be constants).
void materialize_constant_outputs(ir::Graph& g, PassContext& ctx);
/// Quantizes linear (and embedding) weights under ctx.quant into ET-VK's quantized operators.
void quantize_weights(ir::Graph& g, PassContext& ctx);

/// One row of the lowering table (docs/op-coverage.md is generated from these).
struct LoweringInfo {
  std::string_view onnx_op, targets, conditions;
};
/// Every ONNX operator lower_to_vulkan handles, in table order.
std::vector<LoweringInfo> lowering_table();
/// Merges convolution followed by relu/clamp into et_vk.conv_with_clamp.
void fuse_conv_clamp(ir::Graph& g, PassContext& ctx);
/// linear(x, W) + a constant per-output bias -> linear(x, W, bias).
void fuse_linear_bias(ir::Graph& g, PassContext& ctx);
/// Folds runtime permute/view chains: inverse permutes cancel, views of views are one view, a
/// permute that keeps the element order is a view, identical movements of one value are made once.
void fold_data_movement(ir::Graph& g, PassContext& ctx);
/// Removes nodes whose outputs nothing uses.
void eliminate_dead_code(ir::Graph& g, PassContext& ctx);

}  // namespace vkc::passes
