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

struct Entry {
  const char* schema;
  const char* family;
  DTypeSet dtypes;
  RepSet reps;
  std::vector<size_t> self_prepacked;
  bool highdim = false;
};

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
    // BatchNorm.cpp: only output 0 is written; weight, bias, mean and var must be constants.
    {"aten._native_batch_norm_legit_no_training.default(Tensor input, Tensor? weight, Tensor? bias, "
     "Tensor running_mean, Tensor running_var, float momentum, float eps) -> (Tensor, Tensor, Tensor)",
     "normalization", kFp, kChannelsPackedTexture, {1, 2, 3, 4}},
    // Upsample.cpp: exactly one of output_size / scale_factors is set.
    {"aten.upsample_nearest2d.vec(Tensor input, SymInt[]? output_size, float[]? scale_factors) -> Tensor",
     "resize", kFp, kChannelsPackedTexture, {}},
    {"aten.upsample_bilinear2d.vec(Tensor input, SymInt[]? output_size, bool align_corners, "
     "float[]? scale_factors) -> Tensor",
     "resize", kFp, kChannelsPackedTexture, {}},
    // Pool.cpp
    {"aten.max_pool2d_with_indices.default(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, "
     "int[2] dilation=1, bool ceil_mode=False) -> (Tensor, Tensor)",
     "pooling", kFp, kChannelsPackedTexture, {}},
    {"aten.avg_pool2d.default(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, "
     "bool ceil_mode=False, bool count_include_pad=True, int? divisor_override=None) -> Tensor",
     "pooling", kFp, kChannelsPackedTexture, {}},
    // Reduce.cpp, Softmax.cpp
    // A two-dim mean (GlobalAveragePool's H and W) needs a texture packed along the remaining dim.
    {"aten.mean.dim(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
     "reduction", kFp, kChannelsPackedTexture, {}},
    {"aten._softmax.default(Tensor self, int dim, bool half_to_float) -> Tensor", "softmax", kFp, kAnyStorage, {}},
    // View.cpp, Cat.cpp, Permute.cpp
    {"aten.view_copy.default(Tensor self, SymInt[] size) -> Tensor", "shape", kFpIntBool, kAnyStorage, {}, true},
    {"aten.cat.default(Tensor[] tensors, int dim=0) -> Tensor", "shape", kFpInt, kAnyStorage, {}},
    {"aten.permute_copy.default(Tensor self, int[] dims) -> Tensor", "shape", kFpIntBool, kAnyStorage, {}, true},
    // Clone.cpp: also the layout transition the partitioner inserts
    {"aten.clone.default(Tensor self, *, MemoryFormat? memory_format=None) -> Tensor", "transition", kFpIntBool, kAnyStorage, {}, true},
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
      ops.push_back(OpDef{parse_op_schema(e.schema, e.family), e.dtypes, e.reps, e.self_prepacked, e.highdim});
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

}  // namespace vkc::ir
