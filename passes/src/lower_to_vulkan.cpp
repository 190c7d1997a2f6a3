#include <fmt/format.h>

#include "lowering/lowering.h"
#include "vkc/passes/passes.h"

namespace vkc::passes {

namespace lowering {
const std::vector<Lowering>& all_lowerings() {
  static const std::vector<Lowering> kLowerings = {
      {"Conv", lower_conv},
      {"ConvTranspose", lower_conv_transpose},
      {"MaxPool", lower_max_pool},
      {"AveragePool", lower_average_pool},
      {"GlobalAveragePool", lower_global_average_pool},
      {"Add", lower_binary},
      {"Sub", lower_binary},
      {"Mul", lower_binary},
      {"Div", lower_binary},
      {"Relu", lower_unary},
      {"Sigmoid", lower_unary},
      {"HardSwish", lower_unary},
      {"Clip", lower_clip},
      {"HardSigmoid", lower_hard_sigmoid},
      {"BatchNormalization", lower_batch_norm},
      {"LayerNormalization", lower_layer_norm},
      {"Resize", lower_resize},
      {"Upsample", lower_resize},
      {"Gemm", lower_gemm},
      {"MatMul", lower_matmul},
      {"Tanh", lower_math_unary},
      {"Abs", lower_math_unary},
      {"Neg", lower_math_unary},
      {"Sqrt", lower_math_unary},
      {"Exp", lower_math_unary},
      {"Sin", lower_math_unary},
      {"Cos", lower_math_unary},
      {"Round", lower_math_unary},
      {"Reciprocal", lower_math_unary},
      {"Log", lower_math_unary},
      {"Pow", lower_pow},
      {"Min", lower_min_max},
      {"Max", lower_min_max},
      {"LeakyRelu", lower_leaky_relu},
      {"Gelu", lower_gelu},
      {"ReduceMean", lower_reduce},
      {"ReduceSum", lower_reduce},
      {"ReduceMax", lower_reduce},
      {"ReduceMin", lower_reduce},
      {"Transpose", lower_transpose},
      {"Slice", lower_slice},
      {"Split", lower_split},
      {"Pad", lower_pad},
      {"Squeeze", lower_reshape},
      {"Unsqueeze", lower_reshape},
      {"Reshape", lower_reshape},
      {"Flatten", lower_reshape},
      {"Concat", lower_concat},
      {"Softmax", lower_softmax},
      {"LogSoftmax", lower_softmax},
      {"Cast", lower_cast},
      {"Where", lower_where},
      {"Equal", lower_logic},
      {"Less", lower_logic},
      {"LessOrEqual", lower_logic},
      {"Greater", lower_logic},
      {"GreaterOrEqual", lower_logic},
      {"And", lower_logic},
      {"Or", lower_logic},
      {"Not", lower_logic},
      {"Gather", lower_gather},
      {"Expand", lower_expand},
      {"Tile", lower_tile},
      {"DepthToSpace", lower_depth_to_space},
      {"Sum", lower_sum},
      {"InstanceNormalization", lower_group_norm},
      {"GroupNormalization", lower_group_norm},
  };
  return kLowerings;
}
}  // namespace lowering

void lower_to_vulkan(ir::Graph& g, PassContext& ctx) {
  for (ir::Node* n : g.nodes()) {
    if (n->domain() == ir::kVulkanDomain) continue;
    const lowering::Lowering* match = nullptr;
    if (n->domain().empty())
      for (const auto& l : lowering::all_lowerings())
        if (l.onnx_op == n->op_type()) match = &l;
    if (!match) {
      ctx.not_lowered[n->name()] = fmt::format("no Vulkan lowering for {}", n->qualified_op());
      continue;
    }
    if (auto why = match->lower(g, n)) ctx.not_lowered[n->name()] = *why;
  }
}

}  // namespace vkc::passes
