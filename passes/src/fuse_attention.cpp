// Attention as exporters write it, on rank-4 [B, H, S, D] tensors:
//   MatMul(Softmax(MatMul(Q*c1, Transpose(K)*c2) * c3 [+ mask], axis=-1), V)
// (each scale c optional, as Mul or Div by a constant) becomes et_vk.sdpa(Q, K, V, mask, scale)
// with scale = c1 * c2 * c3 (1 when there is none).
#include "pattern_utils.h"
#include "vkc/passes/passes.h"

namespace vkc::passes {
namespace {

// Peels a Mul/Div by a constant scalar off `v` (only used here): returns the operand and
// multiplies `scale`; `dead` collects the node.
ir::Value* unscale(ir::Graph& g, ir::Value* v, double& scale, std::vector<ir::Node*>& dead) {
  for (const char* op : {"Mul", "Div"}) {
    ir::Node* n = sole_producer(g, v, op);
    if (!n) continue;
    for (size_t side : {0u, 1u}) {
      auto c = constant_scalar(n->input(side));
      if (!c || (op[0] == 'D' && side == 0) || *c == 0) continue;
      scale *= op[0] == 'M' ? *c : 1.0 / *c;
      dead.push_back(n);
      return n->input(1 - side);
    }
  }
  return v;
}

bool is_rank4(const ir::Value* v) { return v && v->type().known() && v->shape().rank() == 4 && v->shape().is_static(); }

bool fuse_at(ir::Graph& g, ir::Node* softmax) {
  const auto& shape = softmax->input(0)->shape();
  const int64_t axis = softmax->attr_int("axis", softmax->opset() >= 13 ? -1 : 1);
  if (shape.rank() != 4 || (axis != -1 && axis != 3)) return false;
  ir::Node* out = sole_user(g, softmax->output(0), "MatMul");
  if (!out || out->input(0) != softmax->output(0)) return false;
  std::vector<ir::Node*> dead = {softmax};
  double scale = 1.0;
  ir::Value* scores = softmax->input(0);
  ir::Value* mask = nullptr;
  if (ir::Node* add = sole_producer(g, scores, "Add")) {
    ir::Node* lhs = add->input(0)->producer();
    const bool left_is_scores = lhs && (lhs->is_onnx("MatMul") || lhs->is_onnx("Mul") || lhs->is_onnx("Div"));
    mask = left_is_scores ? add->input(1) : add->input(0);
    scores = left_is_scores ? add->input(0) : add->input(1);
    if (!ir::is_float(mask->dtype())) return false;
    dead.push_back(add);
  }
  scores = unscale(g, scores, scale, dead);
  ir::Node* qk = sole_producer(g, scores, "MatMul");
  if (!qk) return false;
  dead.push_back(qk);
  ir::Value* q = unscale(g, qk->input(0), scale, dead);
  ir::Value* kt = unscale(g, qk->input(1), scale, dead);
  ir::Node* transpose = sole_producer(g, kt, "Transpose");
  if (!transpose || transpose->attr_ints("perm") != std::vector<int64_t>{0, 1, 3, 2}) return false;
  dead.push_back(transpose);
  ir::Value* k = unscale(g, transpose->input(0), scale, dead);
  ir::Value* v = out->input(1);
  if (!is_rank4(q) || !is_rank4(k) || !is_rank4(v) || q->dtype() != ir::DType::Float32) return false;
  out->morph(ir::kVulkanDomain, "et_vk.sdpa.default", mask ? std::vector<ir::Value*>{q, k, v, mask}
                                                           : std::vector<ir::Value*>{q, k, v, nullptr},
             {{"scale", scale}});
  for (ir::Node* n : dead) g.remove_node(n);
  return true;
}

}  // namespace

void fuse_attention(ir::Graph& g, PassContext&) {
  for (ir::Node* n : g.nodes())
    if (n->is_onnx("Softmax")) fuse_at(g, n);
}

}  // namespace vkc::passes
