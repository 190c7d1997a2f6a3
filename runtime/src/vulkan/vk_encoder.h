// What a Vulkan operator encoder sees: the OperatorCall's arguments decoded strictly (as the cpu
// backend decodes them), GPU tensors by argument, constants as raw buffers, the shader library,
// and the dispatch list. Every error names the node and operator.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "../call_args.h"
#include "vk_pipeline.h"
#include "vkc/ir/dtype.h"
#include "vkc/kernels/host_tensor.h"
#include "vkc/serializer/vk_graph.h"

namespace vkc::runtime::vk {

/// A VkGraph tensor on the device: a contiguous buffer (W fastest) or a 3-D image of texels
/// packed along `packed_dim` (vkc_common.glslh).
struct GpuTensor {
  ir::DType dtype = ir::DType::Float32;  // the GPU dtype
  std::vector<int64_t> dims;             // NCHW, rank <= 4
  ivec4 sizes{1, 1, 1, 1};               // WHCN
  bool texture = false;
  int packed_dim = 0;                    // 0 W, 1 H, 2 C (buffers: 0; int8x4: the packed dim)
  /// A q8ta int8 activation: a buffer of 4 int8 per i32 word along packed_dim (C for rank 4, else W),
  /// the rest of the dims outside it (vkc_q8ta.glslh); dtype is Int32 and items() counts words.
  bool int8x4 = false;
  Buffer buffer;
  Image image;

  const char* storage() const { return texture ? "texture3d" : "buffer"; }
  const char* layout() const;
  std::string_view dtype_name() const { return ir::dtype_name(dtype); }
  Resource resource() const { return texture ? Resource{VK_NULL_HANDLE, image.view} : Resource{buffer.buffer, VK_NULL_HANDLE}; }
  /// Invocations of a one-per-element (buffer) / one-per-texel (texture) dispatch over `s`.
  int64_t items(ivec4 s) const;
  int64_t items() const { return items(sizes); }
};

/// WHCN sizes of NCHW dims (rank <= 4, missing dims 1).
ivec4 whcn(const std::vector<int64_t>& dims);
/// The WHCN index of NCHW dim `d` (negative counts from the end) of a rank-`rank` tensor.
int whcn_dim(int64_t d, size_t rank);

/// node_id of the pseudo-calls that stage inputs and outputs.
constexpr uint32_t kStagingNode = UINT32_MAX;

class Encoder : public CallArgs {
 public:
  Encoder() : CallArgs(nullptr, nullptr, false) {}
  virtual ~Encoder() = default;
  const serializer::VkOperatorCall& call() const { return *call_; }
  const std::string& op() const { return call_->name; }

  // ---- arguments (schema order, the last one is the output): CallArgs, and
  bool is_constant(size_t i) const;
  const serializer::VkTensor& vk_tensor(int32_t id) const;

  // ---- tensors
  virtual GpuTensor& tensor_id(int32_t id) = 0;
  /// Tensor argument i; a constant is materialized in `like`'s storage and layout (or, without
  /// `like`, fails).
  virtual GpuTensor& tensor(size_t i, const GpuTensor* like = nullptr) = 0;
  GpuTensor& out() { return tensor_id(call_->args.back()); }
  /// Constant argument i as a contiguous buffer of `dtype`; `numel` (> 0) checks or broadcasts a
  /// one-element constant to that many elements.
  virtual VkBuffer raw(size_t i, ir::DType dtype, int64_t numel = 0) = 0;
  /// The same for constant value `id` (an argument of another call, as sibling linears read).
  virtual VkBuffer raw_value(int32_t id, ir::DType dtype, int64_t numel = 0) = 0;
  /// Constant argument i as a contiguous buffer tensor of `dtype` (for copies from it).
  virtual GpuTensor& constant(size_t i, ir::DType dtype) = 0;
  /// Constant argument i rearranged on the host at load by `pack` (from the constant in `dtype`
  /// to the buffer's bytes), uploaded once; cached per constant, dtype and `packing` name.
  /// `packing` names the layout, with whatever parameters `pack` captures.
  using Packer = std::function<std::vector<uint8_t>(const kernels::HostTensor&)>;
  virtual VkBuffer packed(size_t i, ir::DType dtype, std::string_view packing, const Packer& pack) = 0;
  /// A buffer of `n` copies of `v` in `dtype` (absent weights, biases).
  virtual VkBuffer filled(int64_t n, double v, ir::DType dtype) = 0;
  /// A device tensor of this delegate's lifetime for intermediate results (e.g. a 1-D convolution
  /// run as a 2-D one); `like` gives dtype, storage and packing.
  virtual GpuTensor& scratch(std::vector<int64_t> dims, const GpuTensor& like) = 0;
  /// A device tensor kept across runs (state such as a KV cache), slot `slot` of this call; shared
  /// by the instances of one delegate at several sizes.
  virtual GpuTensor& persistent(int slot, std::vector<int64_t> dims, const GpuTensor& like) = 0;
  /// Value `id`, a tensor an operator writes in place across runs (update_cache's cache), as one
  /// tensor shared by the instances of one delegate at several sizes: made by the first instance,
  /// which copies this instance's tensor (its initial value, prepacked) into it at load. From here
  /// on this instance reads `id` from it.
  virtual GpuTensor& state_tensor(int32_t id) = 0;
  /// Fails when value `id` is read by another operator or is a graph output (ops that do not
  /// write some of their outputs).
  virtual void require_unused(int32_t id, const char* what) = 0;
  /// The host-visible staging buffer of delegate input value `id` (written before every run), or null.
  virtual const GpuTensor* input_staging(int32_t id) = 0;

  /// Where each SymInt value (by id) is read at run time: an int32 buffer and the element in it.
  struct SymIntSource {
    VkBuffer buffer = VK_NULL_HANDLE;
    int32_t index = 0;
  };
  std::unordered_map<int32_t, SymIntSource> symint_sources;
  /// SymInts known while encoding (sym_size.int and its arithmetic); int_arg reads them.
  std::unordered_map<int32_t, int64_t> encoded_symints;
  /// Per-row int8 scales (value id) whose choose_qparams ran no dispatch: every reader is an 8da4w
  /// matrix-vector linear that computes its row's parameters itself (with this eps).
  std::unordered_map<int32_t, float> row_quantized_in_linear;
  /// A rotary embedding (apply_rotary_emb_hf) left to the attention over the cache that alone reads
  /// its outputs (sdpa_kv_cache_fused_rope rotates q and the new k as it reads them): by the rotated
  /// q's value id, the unrotated q and k, the tables and the first table row.
  struct PendingRope {
    int32_t q_out = -1, k_out = -1, q_in = -1, k_in = -1, cos = -1, sin = -1;
    int32_t start = 0;
    bool at_pos = false;  // the tables hold every position: rows from the attention's start_pos
  };
  std::optional<PendingRope> pending_rope;
  /// RMSNorms left to the matrix-vector linears that alone read their outputs (the _norm variants
  /// run the norm on their input rows): by the norm output's value id, its input, its weight as a
  /// buffer in the output dtype, and eps.
  struct PendingNorm {
    int32_t x = -1;
    VkBuffer gamma = VK_NULL_HANDLE;
    float eps = 0;
  };
  std::unordered_map<int32_t, PendingNorm> pending_norms;
  /// The pending norm whose output is value `id`, or null.
  const PendingNorm* pending_norm(int32_t id) const {
    const auto it = pending_norms.find(id);
    return it == pending_norms.end() ? nullptr : &it->second;
  }
  /// SymInt argument i's run-time source; fails for a SymInt no et_vk.select_as_symint defined.
  SymIntSource symint_source(size_t i) const;

  // ---- the device
  /// Whether the device is a CPU (lavapipe): kernel choices that only pay off with thousands of
  /// parallel invocations (split-K) are not made there.
  virtual bool cpu_device() const = 0;
  /// Whether the device runs integer dot products (shaderIntegerDotProduct: the q8ta _dot variants).
  virtual bool integer_dot_product() const = 0;
  /// Whether compute shaders have subgroup arithmetic (the matrix-vector kernels' subgroup sums).
  virtual bool subgroup_arithmetic() const = 0;
  /// Whether the device runs the cooperative-matrix variants (VK_KHR/NV_cooperative_matrix with
  /// the 16x16x16 fp16 shape; `VKC_VULKAN_COOPMAT=0` turns them off).
  virtual bool cooperative_matrix() const = 0;

  // ---- shaders
  /// The variant for this op (or `op_override`), in `out`'s dtype/storage/layout; `name_prefix`
  /// picks among several kernels. Fails naming op, node and the query when none matches.
  virtual const codegen::LibraryVariant& variant(const GpuTensor& out, std::string_view in_storage = {},
                                                 std::string_view name_prefix = {},
                                                 std::string_view op_override = {}) = 0;
  /// Whether variant(out, {}, name_prefix) finds one.
  virtual bool has_variant(const GpuTensor& out, std::string_view name_prefix) = 0;
  virtual void dispatch(const codegen::LibraryVariant& v, std::vector<Resource> resources, const Push& push,
                        int64_t items) = 0;
  /// Fails unless `t` has `ref`'s storage (and layout when `same_layout`).
  void require_rep(const GpuTensor& t, const GpuTensor& ref, const char* what, bool same_layout) const;
  /// Rank 5-8 tensors fold their leading dims into WHCN's N, so an elementwise kernel can broadcast
  /// an operand over those dims only wholly (all of them 1) or not at all: fails otherwise.
  void require_unbroadcast_high_rank(const GpuTensor& out, std::initializer_list<const GpuTensor*> ins) const;

  // ---- load-time epilogue fusion (the program is unchanged; fewer dispatches run it)
  /// The call right after this one in the chain when it is `op_name` and the only reader of this
  /// call's output, which is no delegate output; an input of this call that shares the next
  /// output's memory object must have its shape and representation (so one elementwise dispatch
  /// may read this call's inputs and write the next call's output); null otherwise, and always
  /// under VKC_VULKAN_FUSE=0.
  const serializer::VkOperatorCall* sole_next(std::string_view op_name) const;
  /// Whether load-time fusions run (VKC_VULKAN_FUSE=0 turns them off).
  static bool fusing();
  /// Takes `next` (from sole_next) into this call's dispatch: the chain skips it (`calls` 2: the
  /// call after it too, as a SiLU's sigmoid and mul).
  void absorb_next(int calls = 1) { absorbed_ = calls; }
  /// The SiLU that alone reads this call's output y, sigmoid(y) -> s then mul(y, s) (either order)
  /// as the next two calls, s read by that mul alone and neither a delegate output: the mul's
  /// output value id, else -1 (and always under VKC_VULKAN_FUSE=0).
  int32_t sole_next_silu() const;
  /// The output value id of the next call (after sole_next returned it).
  int32_t next_output() const { return next_call_->args.back(); }
  /// The call after this one in the chain, or null.
  const serializer::VkOperatorCall* next_call() const { return next_call_; }
  const serializer::VkGraph* graph() const { return graph_; }
  /// Whether value `id` is an output of the delegate.
  bool is_delegate_output(int32_t id) const { return graph_outputs_.count(id) != 0; }
  /// Argument slots naming value `id` across the chain (its producer's included).
  int uses(int32_t id) const {
    const auto it = uses_.find(id);
    return it == uses_.end() ? 0 : it->second;
  }

 protected:
  const serializer::VkOperatorCall* next_call_ = nullptr;
  const serializer::VkOperatorCall* after_next_call_ = nullptr;
  int absorbed_ = 0;  // calls after this one that its dispatch ran
  std::unordered_map<int32_t, int> uses_;  // value id -> argument slots naming it across the chain
  std::unordered_set<int32_t> graph_outputs_;
 public:

};

using OpEncoder = void (*)(Encoder&);
/// Every operator the vulkan backend encodes, by registry name.
const std::unordered_map<std::string, OpEncoder>& vulkan_ops();
void add_copy_ops(std::unordered_map<std::string, OpEncoder>& t);
void add_elementwise_ops(std::unordered_map<std::string, OpEncoder>& t);
void add_nn_ops(std::unordered_map<std::string, OpEncoder>& t);
void add_llm_ops(std::unordered_map<std::string, OpEncoder>& t);
void add_quant_ops(std::unordered_map<std::string, OpEncoder>& t);
void add_q8ta_ops(std::unordered_map<std::string, OpEncoder>& t);
/// linear/addmm on cooperative matrices (vk_ops_coopmat.cpp) when the device, dtype (fp16), shapes
/// and a constant weight allow it; false (nothing encoded) otherwise.
bool encode_linear_coopmat(Encoder& e);

/// Whether a linear over K with output `out` should split K across a workgroup per output element /
/// texel (few outputs, long K: decoding), rather than run one invocation per output.
/// Never on a CPU device (lavapipe): its invocations are SIMD lanes of a few cores, which the tiled
/// kernel keeps busy, and its workgroup barriers are dear (on lavapipe split-K took 3-14x the tiled
/// kernel's time: [1, 4096] x [4096, 4096] 63.6 vs 22.9 ms, [8, 2048] x [2048, 512] 24.3 vs 1.8 ms).
inline bool use_split_k(const GpuTensor& out, int64_t k, bool cpu_device) {
  return !cpu_device && out.items() <= 16384 && k >= 128;
}

/// Whether a linear into `out` over K = `k` takes a matrix-vector kernel (vkc_linear_gemv.glslh):
/// on a GPU, at most 4 rows, K a whole number of the kernel's 16-byte chunks of `chunk` weights,
/// textures width-packed. VKC_VULKAN_GEMV=0 turns them off (to compare with the split-K kernels).
bool use_gemv(const GpuTensor& out, int64_t k, int64_t chunk, bool cpu_device);
/// Whether an 8da4w linear (linear_dq8ca_q4gsw) into `out` over K with int4 groups of `group`
/// takes the matrix-vector kernel.
inline bool dq8ca_gemv(const GpuTensor& out, int64_t k, int64_t group, bool cpu_device) {
  return group % 32 == 0 && use_gemv(out, k, 32, cpu_device);
}
/// Dispatch items of matrix-vector variant `v`: its workgroup per 4 outputs of a row (per 16: `_t4`).
int64_t gemv_items(const GpuTensor& out, const codegen::LibraryVariant& v);
/// The 4-output blocks a workgroup of matrix-vector variant `v` computes: 4 for the `_t4` copies
/// (teams of 64 sharing a staged row), else 1.
int64_t gemv_teams(const codegen::LibraryVariant& v);
/// The matrix-vector kernel `name` for a K, or, under VKC_VULKAN_GEMV_WIDE=1, its 256-invocation
/// copy (`name_w256`, the specs' local_size_variants) where K is past 2048 and the library has one
/// for `out` (off by default: slower on the H100); first its copy of 4 teams (`name_t4`, the _dot
/// kernels) where there is one, unless VKC_VULKAN_GEMV_TEAMS=1 (vk_encoder.cpp).
std::string gemv_width(Encoder& e, const GpuTensor& out, const std::string& name, int64_t k);
/// Where a matrix-vector linear into `out` writes: `out`, or the output of a view_copy that alone
/// reads it, absorbed into the linear's dispatch (a decode step's Q/K/V projections go straight
/// into their heads): for buffers any view (the same elements in the same order); for textures a
/// split of the last dim, [1, S, N] -> [1, S, N / D, D] with D a multiple of 4, written with
/// `split` = D (the shaders' out_split; 0 otherwise).
GpuTensor& gemv_output(Encoder& e, GpuTensor& out, int32_t& split);
/// Whether `view` (a view_copy of `out`) may be written by a matrix-vector linear in out's place,
/// and how: -1 no, 0 the same elements (buffers), D > 0 textures' out_split.
int32_t gemv_view_split(Encoder& e, const GpuTensor& out, const serializer::VkOperatorCall& view);
/// A matrix-vector linear's epilogue (the _ep variants): the add (alpha 1) or mul that alone reads
/// the linear's output `out`, whose other operand has out's shape, dtype and representation, or
/// the SiLU that alone reads it (sole_next_silu; `other` is then `in`, unread), whose output
/// shares no memory with the linear's input `in` (every workgroup reads all of it), absorbed.
/// Returns that operation's output and sets `other` and `op` (1 add, 2 mul, 3 SiLU), or null.
GpuTensor* gemv_epilogue(Encoder& e, const GpuTensor& out, GpuTensor& in, GpuTensor*& other, int32_t& op);

/// A linear of a run of sibling linears (find_sibling_linears) and what it writes: its output, or
/// the view that alone reads it (split as gemv_view_split gives it).
struct SiblingLinear {
  const serializer::VkOperatorCall* call = nullptr;
  GpuTensor* target = nullptr;
  int32_t split = 0;
  size_t last = 0;  // the chain index of its view, or its own
};
/// This matrix-vector linear (output `out`, input length `k`) and the one or two linears right
/// after it in the chain that `takes` (fp_linear_takes_gemv_norm / q4_...) accepts over the same
/// input, each followed or not by the view that alone reads it, with outputs of out's dtype,
/// representation and rows, none sharing memory with the input (`norm`'s when the RMSNorm is left
/// to them) or with another: Q, K and V for one dispatch. Empty under VKC_VULKAN_FUSE=0.
/// `weight_arg`: the argument holding a linear's 2-D weight.
std::vector<SiblingLinear> find_sibling_linears(
    Encoder& e, const GpuTensor& out, int64_t k, const Encoder::PendingNorm* norm,
    bool (*takes)(Encoder&, const serializer::VkOperatorCall&, int32_t), size_t weight_arg = 1);
/// A gated pair this matrix-vector linear (the gate, output `out`) starts: SiLU of its output as
/// sigmoid then mul (the next two calls), the up linear over the same input (`takes` accepts it),
/// then the mul of the two; each intermediate read there alone and no delegate output, the result
/// of out's shape and representation and sharing no memory with the input (`norm`'s when the RMSNorm
/// is left to them). `up` null when there is none (and always under VKC_VULKAN_FUSE=0).
struct GatedPair {
  const serializer::VkOperatorCall* up = nullptr;
  GpuTensor* result = nullptr;  // SiLU(gate) * up
};
GatedPair find_gated_pair(Encoder& e, const GpuTensor& out, const Encoder::PendingNorm* norm,
                          bool (*takes)(Encoder&, const serializer::VkOperatorCall&, int32_t));
/// The calls a gated pair spans after the gate: what its dispatch absorbs.
inline constexpr int kGatedPairCalls = 4;
/// One linear's constants as its kernel family binds them after its output (weights, then scales
/// where it has them, then its bias or a zero), whether it has a bias, its scales' row stride.
struct LinearBuffers {
  std::vector<VkBuffer> buffers;
  bool has_bias = false;
  int32_t scales_stride = 0;
  std::vector<Resource> after = {};  // bound after the buffers (8da4w: the row parameters' tensors)
};
/// A group of matrix-vector linears over one input (`src`: the call's input, or the pending norm's)
/// run as one dispatch of `family` + "_multi" / "_dual" (+ "_norm" with `norm`): sibling linears
/// (`gated` false; each writes its target, an absent third binds the last again) or a gated pair
/// (`gated`: linear 0's target gets SiLU(linear 0) * linear 1). `buffers(call, n)` gives each
/// linear's constants, or nullopt when the group cannot run so (then nothing is dispatched and it
/// returns false); `push` sets the family's own push constants, given each linear's scales stride.
/// The common ones (out_sizes, k, has_bias, out_split, epilogue_op, norm_eps, multi_*) are set
/// here. Absorbs `absorb` calls after this one.
bool dispatch_linear_group(
    Encoder& e, const std::string& family, GpuTensor& out, GpuTensor& src, int64_t k,
    const Encoder::PendingNorm* norm, const std::vector<SiblingLinear>& linears, bool gated, int absorb,
    const std::function<std::optional<LinearBuffers>(const serializer::VkOperatorCall&, int64_t n)>& buffers,
    const std::function<void(Push&, const ivec4& strides)>& push);
/// How many calls after this one the siblings (and their views) span: what the dispatch absorbs.
int sibling_calls_after(const Encoder& e, const std::vector<SiblingLinear>& sibs);

/// Whether call `c` (later in the chain) is a linear that reads value `y` as its input alone and
/// will take a matrix-vector kernel with a _norm variant (linear_gemv, linear_q4_gemv): the
/// readers rms_norm may leave its work to (vk_ops_nn.cpp, vk_ops_quant.cpp).
bool fp_linear_takes_gemv_norm(Encoder& e, const serializer::VkOperatorCall& c, int32_t y);
bool q4_linear_takes_gemv_norm(Encoder& e, const serializer::VkOperatorCall& c, int32_t y);
/// The same for an 8da4w decode step: `c` is the choose_qparams over y that its linears replace
/// (computing their rows' parameters themselves), or one of those linears
/// (linear_dq8ca_q4_gemv_rowq_norm).
bool dq8ca_takes_gemv_norm(Encoder& e, const serializer::VkOperatorCall& c, int32_t y);

/// One region copy (copy.glsl) from `in` to `out`; fields default to a plain clone.
struct CopyRegion {
  ivec4 region{0, 0, 0, 0};  // {0,...}: out.sizes
  ivec4 out_offset{0, 0, 0, 0}, in_offset{0, 0, 0, 0}, in_step{1, 1, 1, 1}, perm{0, 1, 2, 3};
  float fill = 0;
};
void encode_copy(Encoder& e, GpuTensor& out, GpuTensor& in, const CopyRegion& r);
/// A delegate input's or output's staging copy: an f32 host buffer to or from an f16 tensor
/// converts on the GPU (copy.glsl's stage_in_f32 / stage_out_f32); otherwise a plain copy.
void encode_staging_copy(Encoder& e, GpuTensor& out, GpuTensor& in);
/// `in`'s elements, in row-major order, into `out` of the same element count (view.glsl).
void encode_view(Encoder& e, GpuTensor& out, GpuTensor& in);

}  // namespace vkc::runtime::vk
