// Gemm and MatMul: linear when the weight is a constant, mm/bmm otherwise.
#include <fmt/format.h>

#include <algorithm>

#include "../constants.h"
#include "lowering.h"

namespace vkc::passes::lowering {
namespace {

// [rows, cols] -> [cols, rows], scaled.
std::vector<float> transpose(const std::vector<float>& m, int64_t rows, int64_t cols, float scale) {
  std::vector<float> t(m.size());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) t[c * rows + r] = m[r * cols + c] * scale;
  return t;
}

bool is_f32_constant(const ir::Value* v) {
  return v && v->is_constant() && v->dtype() == ir::DType::Float32 && v->shape().is_static();
}

// A weight [K, N] (or [N, K] when already transposed) as the [N, K] layout linear expects.
ir::Value* linear_weight(ir::Graph& g, const ir::Node* n, ir::Value* b, bool b_is_nk, float alpha) {
  auto sizes = b->shape().sizes();
  if (b_is_nk && alpha == 1.0f) return b;
  auto values = *constant_floats(b);
  if (b_is_nk) {
    for (float& v : values) v *= alpha;
    return add_float_constant(g, n->name() + "_weight", sizes, values, b->dtype());
  }
  return add_float_constant(g, n->name() + "_weight", {sizes[1], sizes[0]}, transpose(values, sizes[0], sizes[1], alpha),
                            b->dtype());
}

}  // namespace

Result lower_gemm(ir::Graph& g, ir::Node* n) {
  ir::Value* a = n->input(0);
  ir::Value* b = n->input(1);
  ir::Value* c = n->input(2);
  if (n->attr_int("transA", 0) != 0) return std::string("transA=1 is not supported");
  const bool trans_b = n->attr_int("transB", 0) != 0;
  const float alpha = static_cast<float>(n->attr_float("alpha", 1.0));
  const float beta = static_cast<float>(n->attr_float("beta", 1.0));
  const bool fp_constant_b = is_f32_constant(b) || (b && b->is_constant() && b->dtype() == ir::DType::Float16 &&
                                                    b->shape().is_static() && a->dtype() == ir::DType::Float16);
  if (!fp_constant_b || b->shape().rank() != 2) {
    if (c || trans_b || alpha != 1.0f) return std::string("a non-constant B is supported only as a plain A*B");
    to_runtime(n, "aten.mm.default", {a, b}, {});
    return std::nullopt;
  }
  ir::Value* weight = linear_weight(g, n, b, trans_b, alpha);
  const int64_t out_features = weight->shape().sizes()[0];
  ir::Value* bias = nullptr;
  if (c) {
    auto cv = constant_floats(c);
    if (!cv || !c->shape().is_static()) return std::string("bias C is not a float constant");
    if (cv->size() == 1) cv->assign(out_features, (*cv)[0]);
    if (static_cast<int64_t>(cv->size()) != out_features)
      return fmt::format("bias C of shape {} does not broadcast as a per-output bias", c->shape().str());
    for (float& v : *cv) v *= beta;
    const bool as_is = beta == 1.0f && c->dtype() == b->dtype() && c->shape().sizes() == std::vector<int64_t>{out_features};
    bias = as_is ? c : add_float_constant(g, n->name() + "_bias", {out_features}, *cv, b->dtype());
  }
  to_runtime(n, "aten.linear.default", {a, weight, bias}, {});
  return std::nullopt;
}

Result lower_matmul(ir::Graph& g, ir::Node* n) {
  ir::Value* a = n->input(0);
  ir::Value* b = n->input(1);
  auto ra = static_rank(a), rb = static_rank(b);
  if (!ra || !rb) return std::string("operand ranks are unknown");
  const bool fp_weight = is_f32_constant(b) || (b->is_constant() && b->dtype() == ir::DType::Float16 &&
                                                b->shape().is_static() && a->dtype() == ir::DType::Float16);
  if (fp_weight && *rb == 2 && *ra >= 2) {
    // The [K, N] weight reaches linear's [N, K] through a permute of the constant: quantize-weights
    // reads it transposed in place (fp32), and fold-weight-transposes materializes whatever stays float,
    // so no transposed fp32 copy of every weight exists at once.
    const auto kn = b->shape().sizes();
    ir::Node* t = g.add_node(ir::kVulkanDomain, "aten.permute_copy.default", {b},
                             {{b->dtype(), ir::Shape::of({kn[1], kn[0]})}}, g.unique_name(n->name() + "_weight"),
                             n);
    t->attrs() = {{"dims", std::vector<int64_t>{1, 0}}};
    to_runtime(n, "aten.linear.default", {a, t->output(0), nullptr}, {});
    return std::nullopt;
  }
  if (*ra == 2 && *rb == 2) {
    to_runtime(n, "aten.mm.default", {a, b}, {});
    return std::nullopt;
  }
  if (*ra == 3 && *rb == 3 && a->shape().dims[0] == b->shape().dims[0] && a->shape().dims[0].is_static()) {
    to_runtime(n, "aten.bmm.default", {a, b}, {});
    return std::nullopt;
  }
  // Any other batch: a [..., K] x [K, N] matrix is one mm on the flattened rows; otherwise both
  // operands are broadcast (expand_copy) to the output's batch dims, flattened to rank 3, bmm'd
  // and viewed back (attention's [B, H, S, D] products, GQA's size-1 head dims, rank mismatches).
  if (!has_static_shape(a) || !has_static_shape(b) || !has_static_shape(n->output(0)) || *ra < 2 || *rb < 2)
    return fmt::format("MatMul of ranks {} x {} needs static shapes (1-D operands are not supported)", *ra, *rb);
  const auto sa = a->shape().sizes(), sb = b->shape().sizes(), so = n->output(0)->shape().sizes();
  if (so.size() != std::max(sa.size(), sb.size()))
    return fmt::format("MatMul output of rank {} for operands of ranks {} x {}", so.size(), sa.size(), sb.size());
  auto view = [&](ir::Value* v, std::vector<int64_t> shape, const char* tag) {
    if (v->shape().sizes() == shape) return v;
    ir::Node* m = g.add_node(ir::kVulkanDomain, "aten.view_copy.default", {v}, {{v->dtype(), ir::Shape::of(shape)}},
                             g.unique_name(n->name() + tag), n);
    m->attrs() = {{"size", shape}};
    return m->output(0);
  };
  const int64_t m_rows = sa[sa.size() - 2], k = sa.back(), n_cols = sb.back();
  if (*rb == 2) {
    int64_t rows = 1;
    for (size_t d = 0; d + 1 < sa.size(); ++d) rows *= sa[d];
    ir::Node* mm = g.add_node(ir::kVulkanDomain, "aten.mm.default", {view(a, {rows, k}, "_rows"), b},
                              {{n->output(0)->dtype(), ir::Shape::of({rows, n_cols})}}, g.unique_name(n->name() + "_mm"),
                              n);
    to_runtime(n, "aten.view_copy.default", {mm->output(0)}, {{"size", so}});
    return std::nullopt;
  }
  const std::vector<int64_t> batch(so.begin(), so.end() - 2);
  int64_t count = 1;
  for (int64_t d : batch) count *= d;
  // v [..., r, c] with its batch dims broadcast to `batch`, as [count, r, c].
  auto batched = [&](ir::Value* v, int64_t r, int64_t c, const char* tag) {
    std::vector<int64_t> full(batch);
    full.insert(full.end(), {r, c});
    const auto sv = v->shape().sizes();
    std::vector<int64_t> padded(full.size() - sv.size(), 1);
    padded.insert(padded.end(), sv.begin(), sv.end());
    ir::Value* x = view(v, padded, tag);
    if (padded != full) {
      ir::Node* e = g.add_node(ir::kVulkanDomain, "aten.expand_copy.default", {x}, {{v->dtype(), ir::Shape::of(full)}},
                               g.unique_name(n->name() + tag + "_expand"), n);
      e->attrs() = {{"size", full}};
      x = e->output(0);
    }
    return view(x, {count, r, c}, tag);
  };
  ir::Value* a3 = batched(a, m_rows, k, "_a3d");
  ir::Value* b3 = batched(b, k, n_cols, "_b3d");
  ir::Node* bmm = g.add_node(ir::kVulkanDomain, "aten.bmm.default", {a3, b3},
                             {{n->output(0)->dtype(), ir::Shape::of({count, m_rows, n_cols})}},
                             g.unique_name(n->name() + "_bmm"), n);
  to_runtime(n, "aten.view_copy.default", {bmm->output(0)}, {{"size", so}});
  return std::nullopt;
}

}  // namespace vkc::passes::lowering
