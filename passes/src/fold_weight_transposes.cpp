// fold-weight-transposes: a linear's MatMul-form weight arrives as permute_copy(W [K, N], (1, 0))
// (lowering/linear.cpp) so that quantize-weights can read it transposed in place. Whatever still
// reads such a permute (the linears that stay fp32 or fp16) gets the transposed constant here, as
// derived data (ir::transposed): nothing is transposed until the serializer hashes and writes it,
// a band of columns at a time, so a float compile never holds the model's weights twice. Permutes
// nothing reads are left to eliminate-dead-code.
#include "vkc/passes/passes.h"

namespace vkc::passes {

void fold_weight_transposes(ir::Graph& g, PassContext&) {
  std::vector<ir::Node*> permutes;
  for (ir::Node* n : g.nodes()) {
    if (!n->is(ir::kVulkanDomain, "aten.permute_copy.default") || n->attr_ints("dims") != std::vector<int64_t>{1, 0})
      continue;
    const ir::Value* w = n->input(0);
    const bool fp = w->dtype() == ir::DType::Float32 || w->dtype() == ir::DType::Float16;
    if (!w->is_constant() || !fp || w->shape().rank() != 2 || !w->shape().is_static() || g.users(n->output(0)).empty())
      continue;
    permutes.push_back(n);
  }
  for (ir::Node* n : permutes) {
    const ir::Value* w = n->input(0);
    ir::TensorData t = ir::transposed(w->data(), w->shape().sizes()[0], w->shape().sizes()[1], ir::dtype_size(w->dtype()));
    ir::Value* c = g.add_constant(g.unique_name(n->name()), n->output(0)->type(), std::move(t));
    g.replace_all_uses(n->output(0), c);
    g.remove_node(n);
  }
}

}  // namespace vkc::passes
