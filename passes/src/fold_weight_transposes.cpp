// fold-weight-transposes: a linear's MatMul-form weight arrives as permute_copy(W [K, N], (1, 0))
// (lowering/linear.cpp) so that quantize-weights can read it transposed in place. Whatever still
// reads such a permute (the linears that stay fp32 or fp16) gets the transposed constant here, one
// weight at a time; permutes nothing reads are left to eliminate-dead-code. A source read from the
// model's mapped file is let go of once transposed (its pages dropped from memory; read again from
// the file if anything still needs them), so a float compile does not hold the model twice.
#include <cstring>

#include "quant/int_quant.h"
#include "vkc/passes/passes.h"

namespace vkc::passes {

void fold_weight_transposes(ir::Graph& g, PassContext&) {
  for (ir::Node* n : g.nodes()) {
    if (!n->is(ir::kVulkanDomain, "aten.permute_copy.default") || n->attr_ints("dims") != std::vector<int64_t>{1, 0})
      continue;
    const ir::Value* w = n->input(0);
    const bool fp = w->dtype() == ir::DType::Float32 || w->dtype() == ir::DType::Float16;
    if (!w->is_constant() || !fp || w->shape().rank() != 2 || !w->shape().is_static() || g.users(n->output(0)).empty())
      continue;
    const int64_t k = w->shape().sizes()[0], cols = w->shape().sizes()[1];
    const size_t size = ir::dtype_size(w->dtype());
    const uint8_t* src = w->data().bytes().data();
    std::vector<uint8_t> bytes(static_cast<size_t>(k * cols) * size);
    for (int64_t r = 0; r < k; ++r)
      for (int64_t c = 0; c < cols; ++c) std::memcpy(&bytes[(c * k + r) * size], &src[(r * cols + c) * size], size);
    if (w->data().file_backed()) quant::release_pages(src, w->data().size(), true);
    ir::Value* t = g.add_constant(g.unique_name(n->name()), n->output(0)->type(), ir::TensorData::owned(std::move(bytes)));
    g.replace_all_uses(n->output(0), t);
    g.remove_node(n);
  }
}

}  // namespace vkc::passes
