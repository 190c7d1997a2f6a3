// Cast, Where, comparisons, And/Or/Not, Gather, GatherElements, Expand, Tile, DepthToSpace, Sum.
#include <fmt/format.h>

#include <algorithm>

#include <cstdint>
#include <map>
#include <optional>

#include "../constants.h"
#include "lowering.h"

namespace vkc::passes::lowering {

Result lower_cast(ir::Graph&, ir::Node* n) {
  // To bool: x != 0 (ExecuTorch's runtime converts into no bool dtype; NaN is true, as ONNX's).
  const ir::DType from = n->input(0)->dtype(), to = n->output(0)->dtype();
  if (to == ir::DType::Bool && from != ir::DType::Bool && (ir::is_float(from) || from == ir::DType::Int32 || from == ir::DType::Int64)) {
    to_runtime(n, "aten.ne.Scalar", {n->input(0)}, {{"other", int64_t{0}}});
    return std::nullopt;
  }
  to_runtime(n, "aten._to_copy.default", {n->input(0)}, {});  // the output tensor carries the dtype
  return std::nullopt;
}

// Where. Over integers (T5's relative position buckets): b + (a - b) * int(condition), which
// ExecuTorch's runtime runs (ET-VK's where has float and half shaders only); exact for every int32.
Result lower_where(ir::Graph& g, ir::Node* n) {
  ir::Value *c = n->input(0), *a = n->input(1), *b = n->input(2);
  const ir::DType t = n->output(0)->dtype();
  if ((t == ir::DType::Int32 || t == ir::DType::Int64) && has_static_shape(a) && has_static_shape(b) &&
      has_static_shape(c) && has_static_shape(n->output(0))) {
    // a - b in its own broadcast shape (the output's may be larger when the condition broadcasts).
    const auto as = a->shape().sizes(), bs = b->shape().sizes();
    std::vector<int64_t> ab(std::max(as.size(), bs.size()), 1);
    for (size_t i = 0; i < ab.size(); ++i) {
      const int64_t x = i < ab.size() - as.size() ? 1 : as[i - (ab.size() - as.size())];
      const int64_t y = i < ab.size() - bs.size() ? 1 : bs[i - (ab.size() - bs.size())];
      ab[i] = x == 1 ? y : x;
    }
    ir::Node* diff = g.add_node(ir::kVulkanDomain, "aten.sub.Tensor", {a, b}, {{t, ir::Shape::of(ab)}},
                                g.unique_name(n->name() + "_diff"), n);
    diff->attrs() = {{"alpha", 1.0}};
    ir::Node* mask = g.add_node(ir::kVulkanDomain, "aten._to_copy.default", {c}, {{t, c->shape()}},
                                g.unique_name(n->name() + "_mask"), n);
    ir::Value* picked = emit(g, n, "aten.mul.Tensor", {diff->output(0), mask->output(0)});
    to_runtime(n, "aten.add.Tensor", {picked, b}, {{"alpha", 1.0}});
    return std::nullopt;
  }
  to_runtime(n, "aten.where.self", {c, a, b}, {});
  return std::nullopt;
}

namespace {

// An integer comparison with one constant number (sr == 16000, ids < vocab): aten.<op>.Scalar with
// the tensor first (mirrored when the number is on the left): one operand and no constant tensor,
// and ExecuTorch's runtime finds its int32 .Scalar kernels, where its int32 eq.Tensor kernel is
// built under a name its lookup does not use. nullopt: not of that form.
std::optional<bool> lower_integer_comparison_with_number(ir::Node* n) {
  static const std::map<std::string, std::pair<std::string, std::string>, std::less<>> kScalar = {
      {"Equal", {"eq", "eq"}},          {"Less", {"lt", "gt"}},          {"LessOrEqual", {"le", "ge"}},
      {"Greater", {"gt", "lt"}},        {"GreaterOrEqual", {"ge", "le"}}};
  auto it = kScalar.find(n->op_type());
  if (it == kScalar.end() || n->num_inputs() != 2) return std::nullopt;
  for (const size_t k : {size_t{1}, size_t{0}}) {
    ir::Value* number = n->input(k);
    ir::Value* x = n->input(1 - k);
    if (!number || !x || !number->is_constant() || !number->shape().is_static() || number->shape().numel() != 1)
      continue;
    if (x->is_constant() || !x->shape().is_static() || !n->output(0)->shape().is_static() ||
        x->shape() != n->output(0)->shape())
      continue;
    const ir::DType t = x->dtype();
    if (t != ir::DType::Int32 && t != ir::DType::Int64) return std::nullopt;
    auto v = constant_ints(number);
    if (!v || v->size() != 1 || (*v)[0] < INT32_MIN || (*v)[0] > INT32_MAX) return std::nullopt;
    const std::string op = "aten." + (k == 1 ? it->second.first : it->second.second) + ".Scalar";
    to_runtime(n, op, {x}, {{"other", (*v)[0]}});
    return true;
  }
  return std::nullopt;
}

}  // namespace

Result lower_logic(ir::Graph& g, ir::Node* n) {
  static const std::map<std::string, std::string, std::less<>> kOps = {
      {"Equal", "aten.eq.Tensor"}, {"Less", "aten.lt.Tensor"},          {"LessOrEqual", "aten.le.Tensor"},
      {"Greater", "aten.gt.Tensor"}, {"GreaterOrEqual", "aten.ge.Tensor"}, {"And", "aten.logical_and.default"},
      {"Or", "aten.logical_or.default"}, {"Not", "aten.bitwise_not.default"}};
  if (lower_integer_comparison_with_number(n)) return std::nullopt;
  if (n->is_onnx("Equal") && n->num_inputs() == 2 && n->input(0) && n->input(1) &&
      (n->input(0)->dtype() == ir::DType::Int32 || n->input(0)->dtype() == ir::DType::Int64)) {
    // Two integer tensors: a <= b and a >= b (ExecuTorch's runtime has no int32 eq.Tensor kernel
    // it can find; le, ge and logical_and it has). Exact.
    const ir::TensorType t = n->output(0)->type();
    ir::Node* le = g.add_node(ir::kVulkanDomain, "aten.le.Tensor", {n->input(0), n->input(1)}, {t},
                              g.unique_name(n->name() + "_le"), n);
    ir::Node* ge = g.add_node(ir::kVulkanDomain, "aten.ge.Tensor", {n->input(0), n->input(1)}, {t},
                              g.unique_name(n->name() + "_ge"), n);
    to_runtime(n, "aten.logical_and.default", {le->output(0), ge->output(0)}, {});
    return std::nullopt;
  }
  std::vector<ir::Value*> ins;
  for (ir::Value* v : n->inputs()) ins.push_back(v);
  to_runtime(n, kOps.at(n->op_type()), std::move(ins), {});
  return std::nullopt;
}

Result lower_is_nan(ir::Graph& g, ir::Node* n) {
  ir::Value* x = n->input(0);
  if (!x->type().known()) return std::string("input type is unknown");
  ir::Node* eq = g.add_node(ir::kVulkanDomain, "aten.eq.Tensor", {x, x}, {{ir::DType::Bool, x->shape()}},
                            g.unique_name(n->name() + "_self_equal"), n);
  to_runtime(n, "aten.bitwise_not.default", {eq->output(0)}, {});
  return std::nullopt;
}

// Gather: a constant table with runtime indices is an embedding lookup; one constant scalar index
// is select_copy; constant 1-D indices that count up by one are slice_copy; other indices (constant or computed, any rank) are index_select over them
// flattened to 1-D, viewed to the output's shape when they are not 1-D.
Result lower_gather(ir::Graph& g, ir::Node* n) {
  ir::Value* data = n->input(0);
  ir::Value* idx = n->input(1);
  auto rank = static_rank(data);
  if (!rank) return std::string("input rank is unknown");
  int64_t axis = n->attr_int("axis", 0);
  if (axis < 0) axis += static_cast<int64_t>(*rank);
  if (data->is_constant() && !idx->is_constant()) {
    if (axis != 0 || *rank != 2) return std::string("an embedding lookup needs a 2-D table gathered on axis 0");
    to_runtime(n, "aten.embedding.default", {data, idx}, {});
    return std::nullopt;
  }
  const int64_t dim = data->shape().dims.at(axis).value.value_or(-1);
  auto indices = constant_ints(idx);
  if (data->dtype() == ir::DType::Bool && !(indices && idx->shape().rank() == 0)) {
    // index_select has no bool kernel: gather the values as i32 (0/1), then != 0.
    ir::Node* as_int = g.add_node(ir::kVulkanDomain, "aten._to_copy.default", {data}, {{ir::DType::Int32, data->shape()}},
                                  g.unique_name(n->name() + "_as_i32"), n);
    ir::Node* picked = g.add_node(ir::kOnnxDomain, "Gather", {as_int->output(0), idx},
                                  {{ir::DType::Int32, n->output(0)->shape()}}, g.unique_name(n->name() + "_i32"), n);
    picked->attrs() = {{"axis", axis}};
    picked->set_opset(n->opset());
    if (Result r = lower_gather(g, picked)) return r;
    to_runtime(n, "aten.ne.Scalar", {picked->output(0)}, {{"other", int64_t{0}}});  // back to bool
    return std::nullopt;
  }
  if (indices)
    for (int64_t& i : *indices) {
      if (i < 0) i += dim;
      if (i < 0 || (dim >= 0 && i >= dim)) return fmt::format("index {} is out of range", i);
    }
  if (indices && idx->shape().rank() == 0) {
    to_runtime(n, "aten.select_copy.int", {data}, {{"dim", axis}, {"index", (*indices)[0]}});
    return std::nullopt;
  }
  if (!idx->type().known() || !idx->shape().is_static() || !data->shape().is_static() ||
      !n->output(0)->shape().is_static())
    return std::string("data, indices and output must have static shapes");
  // Constant indices i, i+1, ..., i+k-1 (one head cut from a fused projection, as Falcon's export
  // gathers K and V) are a slice: a plain copy, and what ExecuTorch's runtime computes right.
  const bool run = indices && !indices->empty() &&
                   std::adjacent_find(indices->begin(), indices->end(),
                                      [](int64_t a, int64_t b) { return b != a + 1; }) == indices->end();
  if (idx->shape().rank() == 1 && run) {
    const int64_t start = indices->front(), end = indices->back() + 1;
    to_runtime(n, "aten.slice_copy.Tensor", {data}, {{"dim", axis}, {"start", start}, {"end", end}, {"step", int64_t{1}}});
    return std::nullopt;
  }
  if (idx->shape().rank() == 1) {
    to_runtime(n, "aten.index_select.default", {data, idx}, {{"dim", axis}});
    return std::nullopt;
  }
  // [d0.., k, ..dn] with the flattened indices' count k at `axis`, then viewed to the output.
  const int64_t count = idx->shape().numel();
  ir::Node* flat = g.add_node(ir::kVulkanDomain, "aten.view_copy.default", {idx},
                              {{idx->dtype(), ir::Shape::of({count})}}, g.unique_name(n->name() + "_flat_indices"), n);
  flat->attrs() = {{"size", std::vector<int64_t>{count}}};
  std::vector<int64_t> selected = data->shape().sizes();
  selected.at(static_cast<size_t>(axis)) = count;
  ir::Node* sel = g.add_node(ir::kVulkanDomain, "aten.index_select.default", {data, flat->output(0)},
                             {{n->output(0)->dtype(), ir::Shape::of(selected)}}, g.unique_name(n->name() + "_select"), n);
  sel->attrs() = {{"dim", axis}};
  to_runtime(n, "aten.view_copy.default", {sel->output(0)}, {{"size", n->output(0)->shape().sizes()}});
  return std::nullopt;
}

// GatherElements -> gather (indices constant or computed, of the data's rank).
Result lower_gather_elements(ir::Graph&, ir::Node* n) {
  ir::Value* data = n->input(0);
  ir::Value* idx = n->input(1);
  auto rank = static_rank(data);
  if (!rank || !idx->type().known() || idx->shape().rank() != *rank) return std::string("input rank is unknown");
  if (*rank > 4) return std::string("inputs of rank above 4 are not supported");
  int64_t axis = n->attr_int("axis", 0);
  if (axis < 0) axis += static_cast<int64_t>(*rank);
  if (axis < 0 || axis >= static_cast<int64_t>(*rank)) return std::string("axis is out of range");
  to_runtime(n, "aten.gather.default", {data, idx}, {{"dim", axis}});
  return std::nullopt;
}

Result lower_expand(ir::Graph&, ir::Node* n) {
  const ir::Value* out = n->output(0);
  if (!has_static_shape(out)) return std::string("output shape is not static");
  to_runtime(n, "aten.expand_copy.default", {n->input(0)}, {{"size", out->shape().sizes()}});
  return std::nullopt;
}

Result lower_tile(ir::Graph&, ir::Node* n) {
  auto repeats = constant_ints(n->input(1));
  if (!repeats) return std::string("repeats is not a constant");
  to_runtime(n, "aten.repeat.default", {n->input(0)}, {{"repeats", *repeats}});
  return std::nullopt;
}

namespace {

// x -> view(shape6) -> permute(perm) -> view(n's output shape), the last one becoming n.
void view_permute_view(ir::Graph& g, ir::Node* n, const std::vector<int64_t>& shape6, const std::vector<int64_t>& perm) {
  ir::Value* x = n->input(0);
  ir::Node* v = g.add_node(ir::kVulkanDomain, "aten.view_copy.default", {x}, {{x->dtype(), ir::Shape::of(shape6)}},
                           g.unique_name(n->name() + "_blocks"), n);
  v->attrs() = {{"size", shape6}};
  std::vector<int64_t> permuted;
  for (int64_t p : perm) permuted.push_back(shape6[p]);
  ir::Node* p = g.add_node(ir::kVulkanDomain, "aten.permute_copy.default", {v->output(0)},
                           {{x->dtype(), ir::Shape::of(permuted)}}, g.unique_name(n->name() + "_move"), n);
  p->attrs() = {{"dims", perm}};
  to_runtime(n, "aten.view_copy.default", {p->output(0)}, {{"size", n->output(0)->shape().sizes()}});
}

}  // namespace

// DepthToSpace in CRD mode is torch's pixel_shuffle; DCR mode (the default) orders channels
// (block row, block column, channel): a view to rank 6, a permute and a view.
Result lower_depth_to_space(ir::Graph& g, ir::Node* n) {
  const int64_t b = n->attr_int("blocksize", 1);
  if (n->attr_string("mode", "DCR") == "CRD") {
    to_runtime(n, "aten.pixel_shuffle.default", {n->input(0)}, {{"upscale_factor", b}});
    return std::nullopt;
  }
  if (!has_static_shape(n->input(0)) || n->input(0)->shape().rank() != 4 || !has_static_shape(n->output(0)))
    return std::string("DCR mode needs a static rank-4 input");
  const auto d = n->input(0)->shape().sizes();
  view_permute_view(g, n, {d[0], b, b, d[1] / (b * b), d[2], d[3]}, {0, 3, 4, 1, 5, 2});
  return std::nullopt;
}

// SpaceToDepth: [N, C, H, W] -> [N, C * b * b, H / b, W / b] with channels (block row, block column, C).
Result lower_space_to_depth(ir::Graph& g, ir::Node* n) {
  const int64_t b = n->attr_int("blocksize", 1);
  if (!has_static_shape(n->input(0)) || n->input(0)->shape().rank() != 4 || !has_static_shape(n->output(0)))
    return std::string("needs a static rank-4 input");
  const auto d = n->input(0)->shape().sizes();
  if (b <= 0 || d[2] % b != 0 || d[3] % b != 0) return std::string("H and W must be multiples of the block size");
  view_permute_view(g, n, {d[0], d[1], d[2] / b, b, d[3] / b, b}, {0, 3, 5, 1, 2, 4});
  return std::nullopt;
}

// Variadic Sum as a chain of adds.
Result lower_sum(ir::Graph& g, ir::Node* n) {
  std::vector<ir::Value*> ins;
  for (ir::Value* v : n->inputs())
    if (v) ins.push_back(v);
  if (ins.empty()) return std::string("Sum of nothing");
  if (!has_static_shape(n->output(0))) return std::string("output shape is not static");
  ir::Value* acc = ins[0];
  for (size_t i = 1; i + 1 < ins.size(); ++i) {
    ir::Node* add = g.add_node(ir::kVulkanDomain, "aten.add.Tensor", {acc, ins[i]}, {n->output(0)->type()},
                               g.unique_name(n->name() + "_add"), n);
    acc = add->output(0);
  }
  if (ins.size() == 1) to_runtime(n, "aten.clone.default", {acc}, {});
  else to_runtime(n, "aten.add.Tensor", {acc, ins.back()}, {});
  return std::nullopt;
}

}  // namespace vkc::passes::lowering
