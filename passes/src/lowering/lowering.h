// Lowerings from ONNX operators to ExecuTorch Vulkan runtime operators.
// Each turns one ONNX node into runtime form in place (Node::morph), or leaves
// it untouched and says why it cannot.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "vkc/ir/graph.h"

namespace vkc::passes::lowering {

/// nullopt when lowered; otherwise the reason it could not be (the node is unchanged).
using Result = std::optional<std::string>;
using LowerFn = Result (*)(ir::Graph&, ir::Node*);

struct Lowering {
  std::string_view onnx_op;
  LowerFn lower;
  std::string_view targets;     // the runtime operators it produces (docs/op-coverage.md)
  std::string_view conditions;  // what it needs; otherwise the node is reported, with the reason
};

/// Every lowering; lower_to_vulkan dispatches on the ONNX op type.
const std::vector<Lowering>& all_lowerings();

// conv_pool.cpp
Result lower_conv(ir::Graph&, ir::Node*);
Result lower_conv_transpose(ir::Graph&, ir::Node*);
Result lower_max_pool(ir::Graph&, ir::Node*);
Result lower_average_pool(ir::Graph&, ir::Node*);
Result lower_global_average_pool(ir::Graph&, ir::Node*);
// elementwise.cpp
Result lower_binary(ir::Graph&, ir::Node*);
Result lower_unary(ir::Graph&, ir::Node*);
Result lower_clip(ir::Graph&, ir::Node*);
Result lower_hard_sigmoid(ir::Graph&, ir::Node*);
// normalization.cpp
Result lower_batch_norm(ir::Graph&, ir::Node*);
Result lower_layer_norm(ir::Graph&, ir::Node*);
Result lower_group_norm(ir::Graph&, ir::Node*);
// resize.cpp
Result lower_resize(ir::Graph&, ir::Node*);
Result lower_grid_sample(ir::Graph&, ir::Node*);
/// Resize as per-axis index_select (nearest) or linear with constant weights (linear, cubic).
Result lower_resize_separable(ir::Graph&, ir::Node*);
// linear.cpp
Result lower_gemm(ir::Graph&, ir::Node*);
Result lower_matmul(ir::Graph&, ir::Node*);
// math.cpp
Result lower_math_unary(ir::Graph&, ir::Node*);
Result lower_pow(ir::Graph&, ir::Node*);
Result lower_min_max(ir::Graph&, ir::Node*);
Result lower_leaky_relu(ir::Graph&, ir::Node*);
Result lower_elu(ir::Graph&, ir::Node*);
Result lower_prelu(ir::Graph&, ir::Node*);
Result lower_gelu(ir::Graph&, ir::Node*);
// reduce.cpp
Result lower_reduce(ir::Graph&, ir::Node*);
Result lower_arg_reduce(ir::Graph&, ir::Node*);
// data_movement.cpp
Result lower_transpose(ir::Graph&, ir::Node*);
Result lower_slice(ir::Graph&, ir::Node*);
Result lower_split(ir::Graph&, ir::Node*);
Result lower_pad(ir::Graph&, ir::Node*);
// logic_index.cpp
Result lower_cast(ir::Graph&, ir::Node*);
Result lower_where(ir::Graph&, ir::Node*);
Result lower_logic(ir::Graph&, ir::Node*);
Result lower_is_nan(ir::Graph&, ir::Node*);
Result lower_gather(ir::Graph&, ir::Node*);
Result lower_identity(ir::Graph&, ir::Node*);
Result lower_gather_elements(ir::Graph&, ir::Node*);
Result lower_expand(ir::Graph&, ir::Node*);
Result lower_tile(ir::Graph&, ir::Node*);
Result lower_depth_to_space(ir::Graph&, ir::Node*);
Result lower_space_to_depth(ir::Graph&, ir::Node*);
Result lower_sum(ir::Graph&, ir::Node*);
// shape.cpp
Result lower_reshape(ir::Graph&, ir::Node*);
Result lower_concat(ir::Graph&, ir::Node*);
Result lower_softmax(ir::Graph&, ir::Node*);

// ---- shared helpers (helpers.cpp)
/// Makes `n` the runtime operator `op` with `inputs` and `attrs`; checks the schema.
void to_runtime(ir::Node* n, std::string_view op, std::vector<ir::Value*> inputs, ir::AttributeMap attrs);
/// A runtime node in front of `n`, of n's output type, returning its output.
ir::Value* emit(ir::Graph& g, const ir::Node* n, const char* op, std::vector<ir::Value*> ins,
                ir::AttributeMap attrs = {});
/// Whether `v` has a known dtype and a static shape.
inline bool has_static_shape(const ir::Value* v) { return v && v->type().known() && v->shape().is_static(); }
/// Static rank of a value, or nullopt.
std::optional<size_t> static_rank(const ir::Value* v);
/// ONNX pads [b0, b1, ..., e0, e1, ...] (or auto_pad) as symmetric torch padding for `spatial` dims;
/// nullopt with `why` set when begin != end (then *begin / *end, when given, receive both sides).
std::optional<std::vector<int64_t>> symmetric_padding(const ir::Node* n, const ir::Value* input,
                                                      const std::vector<int64_t>& kernel,
                                                      const std::vector<int64_t>& strides,
                                                      const std::vector<int64_t>& dilations, std::string& why,
                                                      std::vector<int64_t>* begin_out = nullptr,
                                                      std::vector<int64_t>* end_out = nullptr);

}  // namespace vkc::passes::lowering
