// aten.linear(x, W, None) followed by aten.add.Tensor with a constant per-output bias ([N] or
// [1, ..., 1, N]) becomes aten.linear(x, W, bias): exporters write nn.Linear as MatMul + Add (the
// dynamo exporter, onnxruntime's fp16 conversion), which would otherwise take two dispatches.
#include <cstring>

#include "vkc/passes/passes.h"

namespace vkc::passes {
namespace {

// `c` as linear's [N] bias for `out` (a linear output [..., N]); nullptr when it is not one.
ir::Value* as_bias(ir::Graph& g, ir::Value* c, const ir::Value* out) {
  if (!c || !c->is_constant() || c->dtype() != out->dtype() || !c->shape().is_static() || !out->shape().is_static())
    return nullptr;
  const auto sizes = c->shape().sizes(), out_sizes = out->shape().sizes();
  if (sizes.empty() || out_sizes.empty() || sizes.size() > out_sizes.size() || sizes.back() != out_sizes.back())
    return nullptr;
  for (size_t d = 0; d + 1 < sizes.size(); ++d)
    if (sizes[d] != 1) return nullptr;
  if (sizes.size() == 1) return c;
  return g.add_constant(g.unique_name(c->name() + "_bias"), ir::TensorType{c->dtype(), ir::Shape::of({sizes.back()})},
                        c->data());
}

}  // namespace

void fuse_linear_bias(ir::Graph& g, PassContext&) {
  for (ir::Node* add : g.nodes()) {
    if (!add->is(ir::kVulkanDomain, "aten.add.Tensor") || add->num_inputs() != 2) continue;
    if (const ir::Attribute* alpha = add->attr("alpha"))
      if (!std::holds_alternative<std::monostate>(*alpha) &&
          (std::holds_alternative<double>(*alpha) ? std::get<double>(*alpha) != 1.0
                                                  : !std::holds_alternative<int64_t>(*alpha) || std::get<int64_t>(*alpha) != 1))
        continue;
    for (const size_t k : {size_t{0}, size_t{1}}) {
      ir::Node* linear = add->input(k) ? add->input(k)->producer() : nullptr;
      if (!linear || !linear->is(ir::kVulkanDomain, "aten.linear.default") || linear->num_inputs() < 2) continue;
      if (linear->num_inputs() > 2 && linear->input(2)) continue;  // has a bias already
      const ir::Value* out = linear->output(0);
      if (g.users(out).size() != 1 || g.is_output(out) || add->output(0)->shape() != out->shape()) continue;
      ir::Value* bias = as_bias(g, add->input(1 - k), out);
      if (!bias) continue;
      // The add becomes the linear, so its output (and name) stays.
      add->morph(ir::kVulkanDomain, "aten.linear.default", {linear->input(0), linear->input(1), bias}, linear->attrs());
      g.remove_node(linear);
      break;
    }
  }
}

}  // namespace vkc::passes
