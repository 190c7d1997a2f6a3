// One entry per runtime operator. To add an operator: add its entry here (the
// schema string is the runtime's argument order, see docs/adding-an-op.md), a
// lowering in passes/lowering/, and a test.
#include "vkc/ir/op_registry.h"

#include <algorithm>

namespace vkc::ir {
namespace {

constexpr Storage kTex = Storage::Texture3D;
constexpr Storage kBuf = Storage::Buffer;
constexpr Layout kW = Layout::WidthPacked;
constexpr Layout kC = Layout::ChannelsPacked;

// Named representation sets, as ET-VK's partitioner uses them.
constexpr RepSet kAnyStorage = RepSet::any_texture3d() | RepSet::any_buffer();
constexpr RepSet kChannelsPackedTexture = RepSet::of(kTex, kC);
constexpr RepSet kWidthPackedTexture = RepSet::of(kTex, kW);
constexpr RepSet kContiguousAny = RepSet::of(kTex, kW) | RepSet::of(kBuf, kW);

// Named dtype sets, as ET-VK's partitioner uses them.
constexpr DTypeSet kFp{DType::Float16, DType::Float32};
constexpr DTypeSet kFpInt = kFp | DTypeSet{DType::Int32, DType::Int64};
constexpr DTypeSet kFpIntBool = kFpInt | DTypeSet{DType::Bool};
constexpr DTypeSet kAnyDtype = kFpIntBool | DTypeSet{DType::UInt8, DType::Int8};
constexpr DTypeSet kBool{DType::Bool};
constexpr DTypeSet kInt8{DType::Int8};

// The q8ta operators' arguments (custom_ops_lib.py), the runtime's order.
#define Q8TA_IO_ARGS                                                                                       \
  "Tensor x, float input_scale, int input_zero_point, Tensor weights, Tensor weight_sums, Tensor weight_scales, " \
  "float output_scale, int output_zero_point, "
#define Q8TA_CONV_ARGS                                                                                   \
  Q8TA_IO_ARGS "Tensor? bias, SymInt[] kernel_size, SymInt[] stride, SymInt[] padding, SymInt[] dilation, " \
               "SymInt groups, str activation"
#define Q8TA_LINEAR_ARGS Q8TA_IO_ARGS "Tensor? bias=None, str activation=\"none\""

struct Entry {
  const char* schema;
  const char* family;
  DTypeSet dtypes;
  RepSet reps;
  std::vector<size_t> self_prepacked;
  bool highdim = false;
  RepSet (*reps_for)(const Node&) = nullptr;
  bool packed_int8 = false;
  std::optional<Layout> int8_layout = std::nullopt;
};

// Reductions (Reduce.cpp): over the last dim, any texture with keepdim or a width-packed
// buffer; over one other dim, a texture with keepdim; over two dims with keepdim, a texture
// packed along the remaining one of W, H, C. Anything else has no kernel.
RepSet reduce_reps(const Node& n) {
  const Value* x = n.input(0);
  if (!x || !x->type().known()) return {};
  const int64_t rank = static_cast<int64_t>(x->shape().rank());
  std::vector<int64_t> dims;
  if (const Attribute* a = n.attr("dim"); a && std::holds_alternative<std::vector<int64_t>>(*a))
    dims = std::get<std::vector<int64_t>>(*a);
  for (int64_t& d : dims) d = d < 0 ? d + rank : d;
  bool keepdim = false;
  if (const Attribute* a = n.attr("keepdim"); a && std::holds_alternative<bool>(*a)) keepdim = std::get<bool>(*a);
  const RepSet width_buffer = RepSet::of(Storage::Buffer, Layout::WidthPacked);
  if (dims.size() == 1 && dims[0] == rank - 1) return keepdim ? RepSet::any_texture3d() | width_buffer : width_buffer;
  if (dims.size() == 1 && keepdim) return RepSet::any_texture3d();
  // Two dims as ET-VK's reduce2d takes them: the third of W, H, C packed, and not C for a batch
  // above 1 (4-D textures stack batches along C).
  const bool batched = rank == 4 && (!x->shape().is_static() || x->shape().sizes()[0] != 1);
  if (dims.size() == 2 && keepdim && rank >= 3 && !(batched && (dims[0] == 1 || dims[1] == 1))) {
    // WHC index of a dim: W = rank-1, H = rank-2, C = rank-3.
    bool reduced[3] = {false, false, false};
    for (int64_t d : dims)
      if (rank - 1 - d < 3) reduced[rank - 1 - d] = true;
    for (int whc = 0; whc < 3; ++whc)
      if (!reduced[whc] && reduced[(whc + 1) % 3] + reduced[(whc + 2) % 3] == 2)
        return RepSet::of(Storage::Texture3D, static_cast<Layout>(whc));
  }
  return {};
}

// argmax/argmin over one dim: as reduce_reps for that dim (no dim: flattened, buffers only).
RepSet arg_reduce_reps(const Node& n) {
  const Value* x = n.input(0);
  if (!x || !x->type().known()) return {};
  const int64_t rank = static_cast<int64_t>(x->shape().rank());
  const Attribute* a = n.attr("dim");
  if (!a || !std::holds_alternative<int64_t>(*a)) return RepSet::of(Storage::Buffer, Layout::WidthPacked);
  int64_t dim = std::get<int64_t>(*a);
  if (dim < 0) dim += rank;
  bool keepdim = false;
  if (const Attribute* k = n.attr("keepdim"); k && std::holds_alternative<bool>(*k)) keepdim = std::get<bool>(*k);
  const RepSet width_buffer = RepSet::of(Storage::Buffer, Layout::WidthPacked);
  if (dim == rank - 1) return keepdim ? RepSet::any_texture3d() | width_buffer : width_buffer;
  return keepdim ? RepSet::any_texture3d() | width_buffer : width_buffer;
}

// clang-format off
const std::vector<Entry>& entries() {
  static const std::vector<Entry> kEntries = {
    // Convolution.cpp
    {"aten.convolution.default(Tensor input, Tensor weight, Tensor? bias, SymInt[] stride, SymInt[] padding, "
     "SymInt[] dilation, bool transposed, SymInt[] output_padding, SymInt groups) -> Tensor",
     "convolution", kFp, kChannelsPackedTexture, {1, 2}},
    {"et_vk.conv_with_clamp.default(Tensor input, Tensor weight, Tensor? bias, SymInt[] stride, SymInt[] padding, "
     "SymInt[] dilation, bool transposed, SymInt[] output_padding, SymInt groups, Scalar? output_min=None, "
     "Scalar? output_max=None) -> Tensor",
     "convolution", kFp, kChannelsPackedTexture, {1, 2}},
    // Linear.cpp, MatMul.cpp
    {"aten.linear.default(Tensor input, Tensor weight, Tensor? bias=None) -> Tensor",
     "linear", kFp, kContiguousAny, {1, 2}},
    {"aten.addmm.default(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) -> Tensor",
     "linear", kFp, kContiguousAny, {0, 2}},
    {"aten.mm.default(Tensor self, Tensor mat2) -> Tensor", "matmul", kFp, kContiguousAny, {1}},
    {"aten.bmm.default(Tensor self, Tensor mat2) -> Tensor", "matmul", kFp, kContiguousAny, {1}},
    // BinaryOp.cpp
    {"aten.add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor", "elementwise", kFpInt, kAnyStorage, {}, true},
    {"aten.sub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor", "elementwise", kFpInt, kAnyStorage, {}, true},
    {"aten.mul.Tensor(Tensor self, Tensor other) -> Tensor", "elementwise", kFpInt, kAnyStorage, {}, true},
    {"aten.div.Tensor(Tensor self, Tensor other) -> Tensor", "elementwise", kFpInt, kAnyStorage, {}, true},
    // UnaryOp.cpp, Clamp.cpp
    {"aten.relu.default(Tensor self) -> Tensor", "activation", kFp, kAnyStorage, {}},
    {"aten.sigmoid.default(Tensor self) -> Tensor", "activation", kFp, kAnyStorage, {}},
    {"aten.hardswish.default(Tensor self) -> Tensor", "activation", kFp, kAnyStorage, {}},
    {"aten.clamp.default(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor", "activation", kFpInt, kAnyStorage, {}},
    {"aten.hardsigmoid.default(Tensor self) -> Tensor", "activation", kFp, kAnyStorage, {}},
    {"aten.leaky_relu.default(Tensor self, Scalar negative_slope=0.01) -> Tensor", "activation", kFp, kAnyStorage, {}},
    {"aten.gelu.default(Tensor self, *, str approximate='none') -> Tensor", "activation", kFp, kAnyStorage, {}},
    {"aten.tanh.default(Tensor self) -> Tensor", "activation", kFp, kAnyStorage, {}},
    {"aten.abs.default(Tensor self) -> Tensor", "elementwise", kFp, kAnyStorage, {}},
    {"aten.neg.default(Tensor self) -> Tensor", "elementwise", kFp, kAnyStorage, {}},
    {"aten.sqrt.default(Tensor self) -> Tensor", "elementwise", kFp, kAnyStorage, {}},
    {"aten.rsqrt.default(Tensor self) -> Tensor", "elementwise", kFp, kAnyStorage, {}},
    {"aten.exp.default(Tensor self) -> Tensor", "elementwise", kFp, kAnyStorage, {}},
    {"aten.log10.default(Tensor self) -> Tensor", "elementwise", kFp, kAnyStorage, {}},
    {"aten.sin.default(Tensor self) -> Tensor", "elementwise", kFp, kAnyStorage, {}},
    {"aten.cos.default(Tensor self) -> Tensor", "elementwise", kFp, kAnyStorage, {}},
    {"aten.round.default(Tensor self) -> Tensor", "elementwise", kFp, kAnyStorage, {}},
    // BinaryOp.cpp / BinaryScalarOp.cpp
    {"aten.minimum.default(Tensor self, Tensor other) -> Tensor", "elementwise", kFpInt, kAnyStorage, {}, true},
    {"aten.pow.Tensor_Tensor(Tensor self, Tensor exponent) -> Tensor", "elementwise", kFp, kAnyStorage, {}, true},
    {"aten.pow.Tensor_Scalar(Tensor self, Scalar exponent) -> Tensor", "elementwise", kFp, kAnyStorage, {}, true},
    // BatchNorm.cpp: only output 0 is written; weight, bias, mean and var must be constants.
    {"aten._native_batch_norm_legit_no_training.default(Tensor input, Tensor? weight, Tensor? bias, "
     "Tensor running_mean, Tensor running_var, float momentum, float eps) -> (Tensor, Tensor, Tensor)",
     "normalization", kFp, kChannelsPackedTexture, {1, 2, 3, 4}},
    // RmsNorm.cpp, SDPA.cpp: transformer blocks (q, k, v of rank 4 [B, H, S, D], width-packed)
    {"et_vk.rms_norm.default(Tensor x, Tensor w, float eps) -> Tensor", "normalization", kFp, kContiguousAny, {1}},
    {"et_vk.sdpa.default(Tensor q, Tensor k, Tensor v, Tensor? attn_mask=None, float? scale=None) -> Tensor",
     "sdpa", kFp, kContiguousAny, {}},
    // SDPA.cpp (LLM path): q [1, S, Hq, D], k/v [1, S, Hkv, D] written into the caches [1, C, Hkv, D] at
    // start_pos, then causal attention over positions [0, start_pos + S) with scale 1/sqrt(D). The caches
    // are zero constants the op replaces with its own state at load (it never reads them); start_pos is
    // fed at run time (a trailing input: element 0 of an integer tensor). Output [1, S, Hq, D].
    {"sdpa_with_kv_cache.default(Tensor query, Tensor key, Tensor value, Tensor key_cache, Tensor value_cache, "
     "SymInt start_pos, SymInt seq_len, Tensor? attn_mask=None, float drpout_p=0.0, bool is_causal=False, "
     "float? scale=None) -> Tensor",
     "sdpa", kFp, kContiguousAny, {3, 4}},
    // SDPA.cpp (update_cache): value [1, S, Hkv, D] written into cache [1, C, Hkv, D] at rows
    // [start_pos, start_pos + S), in place. The cache is a zero constant prepacked once into a
    // tensor of its own memory that keeps its rows across runs; ET-VK returns a dummy [1]. In vkc's
    // IR the output is the updated cache (so that readers depend on the write); the serializer
    // gives it the cache's value and the call a dummy output.
    {"update_cache.default(Tensor value, Tensor cache, SymInt start_pos) -> Tensor", "kv_cache", kFp,
     RepSet::of(kBuf, kW), {}},
    // RotaryEmbedding.cpp: x [B=1, S, H, D] width-packed, xk with at most xq's heads; cos/sin [S, D/2]
    // (pairs) or [max_S, R] read from row start_pos (halves; R % 8 == 0, R <= D). Outputs (xq_out, xk_out).
    {"et_vk.apply_rotary_emb.default(Tensor xq, Tensor xk, Tensor freqs_cos, Tensor freqs_sin) -> (Tensor, Tensor)",
     "rope", kFp, kContiguousAny, {}},
    {"et_vk.apply_rotary_emb_hf.default(Tensor xq, Tensor xk, Tensor freqs_cos, Tensor freqs_sin, SymInt start_pos) "
     "-> (Tensor, Tensor)",
     "rope", kFp, kContiguousAny, {}},
    // GroupNorm.cpp: weight and bias constants; outputs (out, mean, rstd).
    {"aten.native_group_norm.default(Tensor input, Tensor? weight, Tensor? bias, SymInt N, SymInt C, SymInt HxW, "
     "int group, float eps) -> (Tensor, Tensor, Tensor)",
     "normalization", kFp, kChannelsPackedTexture, {1, 2}},
    // NativeLayerNorm.cpp: normalized_shape of one dim; weight and bias must be constants.
    {"aten.native_layer_norm.default(Tensor input, SymInt[] normalized_shape, Tensor? weight, Tensor? bias, "
     "float eps) -> (Tensor, Tensor, Tensor)",
     "normalization", kFp, kAnyStorage, {1, 2}},
    // Upsample.cpp: exactly one of output_size / scale_factors is set.
    {"aten.upsample_nearest2d.vec(Tensor input, SymInt[]? output_size, float[]? scale_factors) -> Tensor",
     "resize", kFp, kChannelsPackedTexture, {}},
    {"aten.upsample_bilinear2d.vec(Tensor input, SymInt[]? output_size, bool align_corners, "
     "float[]? scale_factors) -> Tensor",
     "resize", kFp, kChannelsPackedTexture, {}},
    // GridSampler.cpp
    {"aten.grid_sampler_2d.default(Tensor input, Tensor grid, int interpolation_mode, int padding_mode, "
     "bool align_corners) -> Tensor",
     "resize", kFp, kAnyStorage, {}},
    // Pool.cpp
    {"aten.max_pool2d_with_indices.default(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, "
     "int[2] dilation=1, bool ceil_mode=False) -> (Tensor, Tensor)",
     "pooling", kFp, kChannelsPackedTexture, {}},
    {"aten.avg_pool2d.default(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, "
     "bool ceil_mode=False, bool count_include_pad=True, int? divisor_override=None) -> Tensor",
     "pooling", kFp, kChannelsPackedTexture, {}},
    // Reduce.cpp, Softmax.cpp
    {"aten.mean.dim(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
     "reduction", kFp, {}, {}, true, reduce_reps},
    {"aten.sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
     "reduction", kFp, {}, {}, true, reduce_reps},
    {"aten.amax.default(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor", "reduction", kFp, {}, {}, true,
     reduce_reps},
    {"aten.amin.default(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor", "reduction", kFp, {}, {}, true,
     reduce_reps},
    // ArgReduce.cpp: int indices (int64, run as int32 with downcast_64_bit); representations as the reductions.
    {"aten.argmax.default(Tensor self, int? dim=None, bool keepdim=False) -> Tensor", "reduction", kFpInt, {}, {}, false,
     arg_reduce_reps},
    {"aten.argmin.default(Tensor self, int? dim=None, bool keepdim=False) -> Tensor", "reduction", kFpInt, {}, {}, false,
     arg_reduce_reps},
    {"aten._softmax.default(Tensor self, int dim, bool half_to_float) -> Tensor", "softmax", kFp, kAnyStorage, {}},
    // View.cpp, Cat.cpp, Permute.cpp
    {"aten.view_copy.default(Tensor self, SymInt[] size) -> Tensor", "shape", kFpIntBool, kAnyStorage, {}, true},
    {"aten.cat.default(Tensor[] tensors, int dim=0) -> Tensor", "shape", kFpInt, kAnyStorage, {}},
    {"aten.permute_copy.default(Tensor self, int[] dims) -> Tensor", "shape", kFpIntBool, kAnyStorage, {}, true},
    // ToCopy.cpp, Where.cpp, BinaryOp.cpp (comparisons, logical), UnaryOp.cpp (bitwise_not)
    {"aten._to_copy.default(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
     "bool? pin_memory=None, bool non_blocking=False, MemoryFormat? memory_format=None) -> Tensor",
     "elementwise", kFpIntBool, kAnyStorage, {}, true},
    {"aten.where.self(Tensor condition, Tensor self, Tensor other) -> Tensor", "elementwise", kFpIntBool, kAnyStorage,
     {}, true},
    {"aten.eq.Tensor(Tensor self, Tensor other) -> Tensor", "elementwise", kFpInt, kAnyStorage, {}, true},
    {"aten.lt.Tensor(Tensor self, Tensor other) -> Tensor", "elementwise", kFpInt, kAnyStorage, {}, true},
    {"aten.le.Tensor(Tensor self, Tensor other) -> Tensor", "elementwise", kFpInt, kAnyStorage, {}, true},
    {"aten.gt.Tensor(Tensor self, Tensor other) -> Tensor", "elementwise", kFpInt, kAnyStorage, {}, true},
    {"aten.ge.Tensor(Tensor self, Tensor other) -> Tensor", "elementwise", kFpInt, kAnyStorage, {}, true},
    // BinaryScalarOp.cpp: a comparison with one number (ET-VK's int32 eq.Tensor kernel is built as
    // binary_eq_int32_<storage>, a name its lookup does not use; the .Scalar ones are found).
    {"aten.eq.Scalar(Tensor self, Scalar other) -> Tensor", "elementwise", kFpInt, kAnyStorage, {}, true},
    {"aten.lt.Scalar(Tensor self, Scalar other) -> Tensor", "elementwise", kFpInt, kAnyStorage, {}, true},
    {"aten.le.Scalar(Tensor self, Scalar other) -> Tensor", "elementwise", kFpInt, kAnyStorage, {}, true},
    {"aten.gt.Scalar(Tensor self, Scalar other) -> Tensor", "elementwise", kFpInt, kAnyStorage, {}, true},
    {"aten.ge.Scalar(Tensor self, Scalar other) -> Tensor", "elementwise", kFpInt, kAnyStorage, {}, true},
    // x != 0: a cast to bool (ET-VK converts to no bool/uint8 dtype; view_convert only from it).
    {"aten.ne.Scalar(Tensor self, Scalar other) -> Tensor", "elementwise", kFpInt, kAnyStorage, {}, true},
    {"aten.logical_and.default(Tensor self, Tensor other) -> Tensor", "elementwise", kBool, kAnyStorage, {}, true},
    {"aten.logical_or.default(Tensor self, Tensor other) -> Tensor", "elementwise", kBool, kAnyStorage, {}, true},
    {"aten.bitwise_not.default(Tensor self) -> Tensor", "elementwise", kBool, kAnyStorage, {}, true},
    {"aten._log_softmax.default(Tensor self, int dim, bool half_to_float) -> Tensor", "softmax", kFp, kAnyStorage,
     {}},
    // Embedding.cpp, IndexSelect.cpp, Gather.cpp, Select.cpp, Expand.cpp, Repeat.cpp, PixelShuffle.cpp
    {"aten.embedding.default(Tensor weight, Tensor indices, SymInt padding_idx=-1, bool scale_grad_by_freq=False, "
     "bool sparse=False) -> Tensor",
     "embedding", kFp, kAnyStorage, {0}},
    {"aten.index_select.default(Tensor self, int dim, Tensor index) -> Tensor", "shape", kFpInt,
     kChannelsPackedTexture, {}},
    {"aten.gather.default(Tensor self, int dim, Tensor index, *, bool sparse_grad=False) -> Tensor", "shape", kFpInt,
     kChannelsPackedTexture, {}},
    {"aten.select_copy.int(Tensor self, int dim, SymInt index) -> Tensor", "shape", kFpIntBool, kAnyStorage, {},
     true},
    {"aten.expand_copy.default(Tensor self, SymInt[] size, *, bool implicit=False) -> Tensor", "shape", kFpIntBool,
     kAnyStorage, {}, true},
    {"aten.repeat.default(Tensor self, SymInt[] repeats) -> Tensor", "shape", kFpIntBool, kAnyStorage, {}},
    {"aten.pixel_shuffle.default(Tensor self, int upscale_factor) -> Tensor", "shape", kFp, kAnyStorage, {}},
    // Slice.cpp, Split.cpp, Pad.cpp, Select.cpp
    {"aten.slice_copy.Tensor(Tensor self, int dim=0, SymInt? start=None, SymInt? end=None, SymInt step=1) -> Tensor",
     "shape", kFpIntBool, kAnyStorage, {}, true},
    {"aten.split_with_sizes_copy.default(Tensor self, SymInt[] split_sizes, int dim=0) -> Tensor[]", "shape",
     kFpInt, kAnyStorage, {}, true},
    {"aten.constant_pad_nd.default(Tensor self, SymInt[] pad, Scalar value=0) -> Tensor", "shape", kFp,
     kAnyStorage, {}},
    // ---- Quantization (issue 5; passes/src/quantize_weights.cpp emits these).
    // Q4gswLinear.cpp: int4 grouped symmetric weights [N, K/2] u8 ((odd+8)<<4 | (even+8)), scales [G, N].
    {"et_vk.linear_q4gsw.default(Tensor self, Tensor weights, Tensor weight_scales, int group_size, "
     "Tensor? bias=None) -> Tensor",
     "quantized-linear", kFp, kContiguousAny, {1, 2, 3}},
    // QuantizedLinear.cpp: int8 dynamic per-row activations (scale/zero point from choose_qparams_affine,
    // width-packed textures as ET-VK's partitioner requires) x int4 weights; weight_sums i32 [G, N pad 8].
    {"et_vk.linear_dq8ca_q4gsw.default(Tensor input, Tensor input_scale, Tensor input_zero_point, Tensor weights, "
     "Tensor weight_sums, Tensor weight_scales, int group_size, Tensor? bias=None) -> Tensor",
     "quantized-linear", kFp, kWidthPackedTexture, {3, 4, 5, 6}},
    // ChooseQParams.cpp: per-row (block [1, .., K]) asymmetric int8 qparams -> (scale f32, zero_point i8).
    {"torchao.choose_qparams_affine.default(Tensor input, str mapping_type, SymInt[] block_size, "
     "ScalarType target_dtype, Scalar? quant_min=None, Scalar? quant_max=None, float? eps=None, "
     "ScalarType? scale_dtype=None, ScalarType? zero_point_dtype=None) -> (Tensor, Tensor)",
     "quantization", kFp, kWidthPackedTexture, {}},
    // QuantizedLinearQCSNW.cpp: int8 per-channel symmetric weights [N, K] i8, scales [N]; no bias argument.
    {"aten._weight_int8pack_mm.default(Tensor self, Tensor mat2, Tensor scales) -> Tensor",
     "quantized-linear", kFp, kContiguousAny, {1, 2}},
    // EmbeddingQ4gsw.cpp: table [V, D/2] u8 packed as linear weights (is_linear_weight), scales [V, G].
    {"et_vk.embedding_q4gsw.default(Tensor weight, Tensor weight_scales, int group_size, Tensor indices, "
     "bool is_linear_weight=False) -> Tensor",
     "quantized-embedding", DTypeSet{DType::UInt8}, kContiguousAny, {0, 1}},
    // Static int8 (q8ta; custom_ops_lib.py, impl/Q8ta*.cpp, QuantizeDequantize.cpp): int8 activations
    // per-tensor affine in packed int8 buffers between operators; int8 weights symmetric per output
    // channel, with int32 weight sums and f32 scales / bias padded to 4 (passes/src/lower_q8ta.cpp).
    {"quantized_decomposed.quantize_per_tensor.default(Tensor input, float scale, int zero_point, int quant_min, "
     "int quant_max, ScalarType dtype) -> Tensor",
     "quantization", kFp, kChannelsPackedTexture | RepSet::of(kBuf, kW), {}, true, nullptr, true, std::nullopt},
    {"quantized_decomposed.dequantize_per_tensor.default(Tensor input, float scale, int zero_point, int quant_min, "
     "int quant_max, ScalarType dtype, *, ScalarType? out_dtype=None) -> Tensor",
     "quantization", kInt8, kChannelsPackedTexture | RepSet::of(kBuf, kW), {}, true, nullptr, true, std::nullopt},
    {"et_vk.q8ta_conv2d.default(" Q8TA_CONV_ARGS ") -> Tensor", "quantized-conv", kInt8, kAnyStorage, {1, 2, 3, 4},
     false, nullptr, true, Layout::PackedInt8_4W4C},
    {"et_vk.q8ta_conv2d_dw.default(" Q8TA_CONV_ARGS ") -> Tensor", "quantized-conv", kInt8, kAnyStorage,
     {1, 2, 3, 4}, false, nullptr, true, Layout::PackedInt8_4W4C},
    {"et_vk.q8ta_conv2d_pw.default(" Q8TA_CONV_ARGS ") -> Tensor", "quantized-conv", kInt8, kAnyStorage,
     {1, 2, 3, 4}, false, nullptr, true, Layout::PackedInt8_4W4C},
    {"et_vk.q8ta_linear.default(" Q8TA_LINEAR_ARGS ") -> Tensor", "quantized-linear", kInt8, kAnyStorage,
     {1, 2, 3, 4}, false, nullptr, true, Layout::PackedInt8_4H4W},
    {"et_vk.q8ta_linear_gemv.default(" Q8TA_LINEAR_ARGS ") -> Tensor", "quantized-linear", kInt8, kAnyStorage,
     {1, 2, 3, 4}, false, nullptr, true, Layout::PackedInt8_4W},
    {"et_vk.q8ta_add.default(Tensor input_a, Tensor input_b, float input_a_scale, int input_a_zero_point, "
     "float input_b_scale, int input_b_zero_point, float output_scale, int output_zero_point, float alpha) -> Tensor",
     "quantized-elementwise", kInt8, kAnyStorage, {}, false, nullptr, true, std::nullopt},
    {"et_vk.q8ta_relu.default(Tensor input, float input_scale, int input_zero_point, float output_scale, "
     "int output_zero_point) -> Tensor",
     "quantized-elementwise", kInt8, kAnyStorage, {}, false, nullptr, true, std::nullopt},
    // ---- end of quantization
    // Clone.cpp: also the layout transition the partitioner inserts
    {"aten.clone.default(Tensor self, *, MemoryFormat? memory_format=None) -> Tensor", "transition", kFpIntBool | kInt8,
     kAnyStorage, {}, true},
    // Staging.cpp
    {"et_vk.prepack.default(Tensor x) -> Tensor", "prepack", kAnyDtype, kAnyStorage, {0}, true},
  };
  return kEntries;
}
// clang-format on

}  // namespace

bool OpDef::prepacks(size_t tensor_arg) const {
  return std::find(self_prepacked.begin(), self_prepacked.end(), tensor_arg) != self_prepacked.end();
}

const std::vector<OpDef>& all_ops() {
  static const std::vector<OpDef> kOps = [] {
    std::vector<OpDef> ops;
    for (const Entry& e : entries())
      ops.push_back(OpDef{parse_op_schema(e.schema, e.family), e.dtypes, e.reps, e.self_prepacked, e.highdim, e.reps_for,
                         e.packed_int8, e.int8_layout});
    return ops;
  }();
  return kOps;
}

const OpDef* find_op(std::string_view name) {
  for (const OpDef& d : all_ops())
    if (d.name() == name) return &d;
  return nullptr;
}

std::string_view op_family(std::string_view name) {
  const OpDef* d = find_op(name);
  return d ? std::string_view(d->family()) : std::string_view("other");
}

bool is_packed_int8_value(const Value* v) {
  while (v && v->dtype() == DType::Int8 && !v->is_constant() && v->producer()) {
    const Node* p = v->producer();
    if (p->op_type() != "aten.clone.default") {
      const OpDef* def = find_op(p->op_type());
      return def && def->packed_int8;
    }
    v = p->input(0);
  }
  return false;
}

}  // namespace vkc::ir
