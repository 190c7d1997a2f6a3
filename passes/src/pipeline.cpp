#include "vkc/passes/pipeline.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

#include "vkc/ir/verifier.h"
#include "vkc/passes/passes.h"

namespace vkc::passes {

const std::vector<PassInfo>& pipeline() {
  static const std::vector<PassInfo> kPipeline = {
      // Inference graphs carry training leftovers; drop them before matching patterns.
      {"remove-identity", "drop Identity, one-input Concat, same-dtype Cast and pass-through Dropout (a used mask becomes all true)", remove_identity},
      // onnxruntime's contrib operators (SkipLayerNormalization, FastGelu, ...) as standard ones,
      // before anything matches patterns.
      {"expand-microsoft-ops", "rewrite com.microsoft Gelu/FastGelu/BiasGelu/QuickGelu/SkipLayerNorm/EmbedLayerNorm/RMSNorm/GroupQueryAttention/RotaryEmbedding/Attention/MultiHeadAttention/FusedMatMul/BiasAdd/BiasSplitGelu/GemmFastGelu/GatherBlockQuantized ops",
       expand_microsoft_ops},
      // --max-seq-len: a cache of keys and values in one tensor (onnxruntime's GPT-2 Attention) as
      // the two caches the cache passes find.
      {"split-packed-cache", "under --max-seq-len, split a [2, B, H, P, D] past/present (keys and values in one tensor) into two caches",
       split_packed_cache, true},
      // --max-seq-len: a merged decoder (If over the step with and without caches) takes the
      // branch with the caches.
      {"take-cache-branch", "under --max-seq-len, bind a merged decoder's branch input to the branch that reads the caches",
       take_cache_branch, true},
      // --max-seq-len: a decode step's attention-mask input is all ones in a one-sequence program (a
      // constant before folding, so the causal mask computed beside it folds too).
      {"assume-unpadded-mask", "under --max-seq-len, take an attention-mask input [1, N] as all ones (no padding)",
       assume_unpadded_mask, true},
      // --max-seq-len without position ids: the positions the graph computes from the cache length
      // (transformers' cache_position) follow a run-time input_pos instead of folding.
      {"keep-cache-positions", "under --max-seq-len, positions computed from the cache length follow a run-time input_pos",
       keep_cache_positions, true},
      // Shape subgraphs become constants once input shapes are static; lowering needs them so.
      {"fold-constants", "evaluate nodes whose inputs are constants with the CPU reference kernels", fold_constants,
       true},
      // Recurrent layers over a static sequence as their per-step equations (linears and elementwise ops;
      // decompose-ops then rewrites the activations it defines by others).
      {"decompose-rnn", "unroll LSTM/GRU/RNN over a static sequence into Gemm/Slice/elementwise steps", decompose_rnn},
      // Operators the ONNX spec defines by others (Selu, Softplus, ReduceL2, CastLike, ...) as those
      // (after folding: static shapes).
      {"decompose-ops",
       "rewrite Selu/Celu/Softplus/Softsign/ThresholdedRelu/ReduceL1/L2/SumSquare/LogSum(Exp)/CastLike/Hardmax/Mean/CumSum/"
       "Trilu, variadic Max/Min, LayerNorm statistics",
       decompose_ops},
      // Einsum (attention, batched products, transposes) as Transpose/Reshape/ReduceSum/MatMul.
      {"decompose-einsum", "rewrite Einsum of one or two operands as Transpose/Reshape/ReduceSum/MatMul",
       decompose_einsum},
      // onnxruntime's QOperator format (QLinearConv, QLinearMatMul) as the QDQ form it stands for.
      {"expand-qlinear-ops", "rewrite QLinearConv/QLinearMatMul as DequantizeLinear -> op -> QuantizeLinear",
       expand_qlinear_ops},
      // onnxruntime's dynamic quantization: fake-quantized activations times DequantizeLinear'd
      // weights, which lower-qdq handles next.
      {"lower-dynamic-quant", "lower DynamicQuantizeLinear + MatMulInteger/ConvInteger chains to float ops",
       lower_dynamic_quant},
      // Static-int8 QDQ graphs: dq -> conv/linear/add/relu -> q on int8 activations, as ET-VK fuses them.
      {"lower-q8ta", "fuse static-int8 QDQ convolutions, linears, adds and relus into ET-VK's q8ta operators",
       lower_q8ta},
      // What lower-q8ta left of an activation's Q -> DQ round trip (it did not fuse it into an int8
      // operator), quantized again alike after max pooling, relu or data movement: exact to drop.
      {"drop-requantized-qdq", "drop Q->DQ round trips whose values are quantized again with the same parameters",
       drop_requantized_qdq},
      // Pre-quantized (QDQ) graphs: int8 weights of MatMul/Gemm to ET-VK's int8 linear, other
      // quantized constants to f32, activation Q->DQ pairs to the float ops computing them.
      {"lower-qdq", "lower QuantizeLinear/DequantizeLinear: int8 linear weights, f32 constants, fake-quant ops",
       lower_qdq},
      // Exporters repeat constants and subgraphs; merging them shrinks what later passes and the file see.
      {"eliminate-common-subexpressions", "merge identical constants and identical nodes",
       eliminate_common_subexpressions},
      // Normalization patterns are matched on the ONNX form, after folding made their constants plain.
      {"fuse-layer-norm", "fuse decomposed LayerNorm (ReduceMean/Sub/Pow/Sqrt/Div) into LayerNormalization",
       fuse_layer_norm},
      {"fuse-rms-norm", "fuse x / sqrt(mean(x^2) + eps) * w into et_vk.rms_norm", fuse_rms_norm},
      {"fuse-gelu", "fuse the erf and tanh GELU decompositions into Gelu", fuse_gelu},
      // Rotary embeddings feed attention's Q and K; matched on the ONNX form with their tables.
      {"fuse-rotary-embedding", "fuse HF rotate-half and pairwise (Meta) RoPE into et_vk.apply_rotary_emb(_hf)",
       fuse_rotary_embedding},
      // Attention runs on whole [B, H, S, D] tensors, before its MatMuls are lowered one by one.
      {"fuse-attention", "fuse MatMul/scale/mask/Softmax/MatMul attention into et_vk.sdpa", fuse_attention},
      // --max-seq-len: the concat-style KV cache of a decode-step graph moves inside the program
      // (sdpa_with_kv_cache over fused attention); the program then takes tokens and input_pos.
      {"use-kv-cache", "under --max-seq-len, keep a decode step's KV cache inside the program (sdpa_with_kv_cache)",
       use_kv_cache, true},
      // One lookup a step in place of the chain a step computes from input_pos (the rotary tables).
      {"tabulate-positions", "under --max-seq-len, read float values computed from input_pos alone (RoPE tables, "
       "position embeddings) from tables of their values at every position", tabulate_positions},
      // Folding BatchNorm needs the ONNX Conv/Gemm form, so it runs before lowering.
      {"fuse-batch-norm", "fold BatchNormalization into the preceding Conv/Gemm", fuse_batch_norm},
      // From here on nodes are runtime operators where a lowering exists.
      {"lower-to-vulkan", "lower ONNX operators to ExecuTorch Vulkan runtime operators", lower_to_vulkan,
       true},
      // Quantization matches the runtime form (aten.linear with a constant [N, K] weight, whatever ONNX
      // spelled it: Gemm, MatMul, transposed or scaled), so it runs right after lowering, before anything
      // fuses around linears. A no-op without --quantize.
      {"quantize-weights", "quantize linear/embedding weights under --quantize (ET-VK's quantized ops)",
       quantize_weights, true},
      // MatMul-form weights still read through a permute (the fp32 linears) become [N, K] constants.
      {"fold-weight-transposes", "transpose the MatMul-form [K, N] weights of fp32/fp16 linears into constants",
       fold_weight_transposes, true},
      // Bias and activation fusion work on the runtime form.
      {"fuse-linear-bias", "merge linear + a constant per-output bias add into the linear's bias", fuse_linear_bias},
      {"fuse-conv-clamp", "merge convolution + relu/clamp into et_vk.conv_with_clamp", fuse_conv_clamp},
      // Fusions leave permutes on both sides of the operators they make (and views between views);
      // on the runtime form, each a copy on the GPU, they fold.
      {"fold-data-movement", "fold permute/view chains: cancel inverse permutes, merge views, drop no-op movements",
       fold_data_movement},
      // Last: whatever the rewrites left unused.
      {"eliminate-dead-code", "remove nodes whose outputs are unused", eliminate_dead_code},
      // Plan outputs cannot be constants: an output folding made constant is cloned.
      {"materialize-constant-outputs", "produce graph outputs that folded to constants with aten.clone",
       materialize_constant_outputs, true},
  };
  return kPipeline;
}

const PassInfo* find_pass(std::string_view name) {
  for (const PassInfo& p : pipeline())
    if (p.name == name) return &p;
  return nullptr;
}

std::string check_skippable(std::string_view name) {
  const PassInfo* p = find_pass(name);
  if (!p) return fmt::format("no pass named '{}' (see --print-pipeline)", name);
  if (p->required) return fmt::format("pass '{}' cannot be skipped: the compile needs it", name);
  return {};
}

void run_pipeline(ir::Graph& g, PassContext& ctx, const PipelineHooks& hooks) {
  for (const PassInfo& p : pipeline()) {
    if (std::find(hooks.skip.begin(), hooks.skip.end(), p.name) != hooks.skip.end()) continue;
    const auto start = std::chrono::steady_clock::now();
    try {
      p.run(g, ctx);
      g.compact();
      ir::verify_or_throw(g);
    } catch (const std::exception& e) {
      throw PassError(fmt::format("pass '{}': {}", p.name, e.what()));
    }
    ctx.pass_seconds.emplace_back(p.name, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    if (hooks.after_pass) hooks.after_pass(p, g);
  }
}

}  // namespace vkc::passes
