// BatchNormalization that fuse-batch-norm could not fold into a convolution.
#include "lowering.h"

namespace vkc::passes::lowering {

Result lower_batch_norm(ir::Graph& g, ir::Node* n) {
  if (n->outputs().size() != 1) return std::string("training-mode outputs (running mean/var) are not supported");
  if (static_rank(n->input(0)) != 4u) return std::string("only rank-4 input is supported");
  for (size_t i = 1; i <= 4; ++i)
    if (!n->input(i) || !n->input(i)->is_constant()) return std::string("scale, bias, mean and var must be constants");
  if (!ir::is_float(n->output(0)->dtype())) return std::string("only floating-point inputs are supported");
  to_runtime(n, "aten._native_batch_norm_legit_no_training.default",
             {n->input(0), n->input(1), n->input(2), n->input(3), n->input(4)},
             {{"momentum", n->attr_float("momentum", 0.9)}, {"eps", n->attr_float("epsilon", 1e-5)}});
  // The runtime writes only the first output; the other two are empty, as in an exported graph.
  const ir::TensorType empty{n->output(0)->dtype(), ir::Shape::of({0})};
  g.add_node_output(n, empty);
  g.add_node_output(n, empty);
  return std::nullopt;
}

}  // namespace vkc::passes::lowering
