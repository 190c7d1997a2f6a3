#include "cache_state.h"

#include <fmt/format.h>

#include "../constants.h"
#include "../folding/evaluate.h"
#include "vkc/passes/pass.h"

namespace vkc::passes::attention {
namespace {

// What a hidden key gets added: far below any score (exp underflows to 0) and exact in fp16, so
// that 0 * it stays 0 where the mask is computed.
constexpr float kHidden = -30000.0f;

int64_t onnx_dtype(ir::DType d) { return d == ir::DType::Float16 ? 10 : 1; }

// The mask operand of the Adds that lead into `softmax` (through the scores' Adds: an
// attention bias may come after the mask), with its values at input_pos = N - S; null if none.
struct Found {
  ir::Node* add = nullptr;
  size_t side = 0;
  MaskKind kind;
};

Found find_mask(const ir::Graph& g, ir::Node* softmax, ir::Value* input_pos, int64_t seq, int64_t n_max) {
  Found bad;
  ir::Value* x = softmax->input(0);
  for (int depth = 0; depth < 4; ++depth) {
    ir::Node* add = x->producer();
    if (!add || !add->is_onnx("Add")) break;
    for (size_t side : {0u, 1u}) {
      const ir::Value* m = add->input(side);
      if (!m->type().known() || !ir::is_float(m->dtype()) || !m->shape().is_static() || m->shape().rank() < 2) continue;
      const auto s = m->shape().sizes();
      const int64_t rows = s[s.size() - 2];
      if (s.back() != n_max || (rows != seq && rows != 1)) continue;
      auto values = mask_values(m, input_pos, n_max - seq);
      if (!values) continue;
      MaskKind kind = classify_mask(*values, rows, n_max, seq, n_max - seq);
      if (kind.reason.empty()) return {add, side, kind};
      bad = {add, side, kind};  // a bias, unless a mask is found further up
    }
    ir::Value* next = nullptr;  // the inner Add of Add(Add(scores, mask), bias)
    for (size_t side : {0u, 1u})
      if (ir::Node* p = add->input(side)->producer(); p && p->is_onnx("Add")) next = add->input(side);
    if (!next) break;
    x = next;
  }
  return bad;
}

}  // namespace

ir::Value* transpose12(ir::Graph& g, const ir::Node* before, ir::Value* x) {
  const auto s = x->shape().sizes();
  return add_onnx_node(g, before, "Transpose", {x}, {x->dtype(), ir::Shape::of({s[0], s[2], s[1], s[3]})},
                       {{"perm", std::vector<int64_t>{0, 2, 1, 3}}});
}

void keep_cache_as_state(ir::Graph& g, const CachePair& pair, ir::Value* input_pos, int64_t n_max) {
  ir::Value* present = pair.present;
  const auto ps = present->shape().sizes();  // [1, Hkv, N, D]
  const ir::Node* at = present->producer();
  const std::vector<int64_t> cs{1, n_max, ps[1], ps[3]};
  // One zero constant per cache: each prepacks into a tensor of its own (the file keeps one copy).
  std::vector<float> zeros(static_cast<size_t>(n_max * ps[1] * ps[3]), 0.0f);
  ir::Value* cache = add_float_constant(g, g.unique_name(pair.past->name() + "_cache"), cs, zeros, present->dtype());
  ir::Value* rows = transpose12(g, at, pair.fresh);
  ir::Node* update = g.add_node(ir::kVulkanDomain, "update_cache.default", {rows, cache, input_pos},
                                {{present->dtype(), ir::Shape::of(cs)}}, g.unique_name(pair.past->name() + "_update"), at);
  ir::Value* view = transpose12(g, at, update->output(0));
  g.replace_all_uses(present, view);
}

ir::Value* runtime_mask(ir::Graph& g, const ir::Node* before, ir::Value* input_pos, int64_t seq, int64_t n_max,
                        int64_t window, ir::DType dtype) {
  using F = ir::DType;
  auto f32 = [&](const std::vector<int64_t>& shape) { return ir::TensorType{F::Float32, ir::Shape::of(shape)}; };
  auto constant = [&](const char* name, const std::vector<int64_t>& shape, const std::vector<float>& v) {
    return add_f32_constant(g, g.unique_name(name), shape, v);
  };
  ir::Value* pos = add_onnx_node(g, before, "Cast", {input_pos}, f32({1}), {{"to", int64_t{1}}});
  pos = add_onnx_node(g, before, "Reshape", {pos, add_i64_constant(g, g.unique_name("mask_pos_shape"), {2}, {1, 1})},
                      f32({1, 1}));
  std::vector<float> steps(seq), keys(n_max);
  for (int64_t i = 0; i < seq; ++i) steps[i] = static_cast<float>(i);
  for (int64_t j = 0; j < n_max; ++j) keys[j] = static_cast<float>(j);
  ir::Value* query = add_onnx_node(g, before, "Add", {pos, constant("mask_rows", {seq, 1}, steps)}, f32({seq, 1}));
  // diff = key - query position: > 0 is a later key; <= -window an older one outside the window.
  ir::Value* diff = add_onnx_node(g, before, "Sub", {constant("mask_keys", {1, n_max}, keys), query}, f32({seq, n_max}));
  ir::Value* zero = constant("mask_zero", {}, {0.0f});
  ir::Value* one = constant("mask_one", {}, {1.0f});
  ir::Value* hidden = add_onnx_node(g, before, "Clip", {diff, zero, one}, f32({seq, n_max}));
  if (window > 0) {
    ir::Value* older = add_onnx_node(
        g, before, "Sub", {constant("mask_window", {}, {static_cast<float>(1 - window)}), diff}, f32({seq, n_max}));
    hidden = add_onnx_node(g, before, "Add", {hidden, add_onnx_node(g, before, "Clip", {older, zero, one}, f32({seq, n_max}))},
                           f32({seq, n_max}));
  }
  ir::Value* mask = add_onnx_node(g, before, "Mul", {hidden, constant("mask_hidden", {}, {kHidden})}, f32({seq, n_max}));
  mask = add_onnx_node(g, before, "Reshape",
                       {mask, add_i64_constant(g, g.unique_name("mask_shape"), {4}, {1, 1, seq, n_max})},
                       f32({1, 1, seq, n_max}));
  if (dtype != F::Float32)
    mask = add_onnx_node(g, before, "Cast", {mask}, {dtype, ir::Shape::of({1, 1, seq, n_max})},
                         {{"to", onnx_dtype(dtype)}});
  return mask;
}

std::optional<std::vector<float>> mask_values(const ir::Value* mask, const ir::Value* input_pos, int64_t pos) {
  if (auto values = constant_floats(mask)) return values;
  if (!input_pos) return std::nullopt;
  const auto bound = kernels::HostTensor::of<int64_t>(ir::DType::Int64, {1}, {pos});
  const auto value = folding::evaluate(mask, {{input_pos, bound}});
  if (!value || !ir::is_float(value->dtype)) return std::nullopt;
  std::vector<float> v(static_cast<size_t>(value->numel()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(value->get_f(static_cast<int64_t>(i)));
  return v;
}

std::vector<std::pair<std::string, int64_t>> mask_state_attention(ir::Graph& g, ir::Value* input_pos, int64_t seq,
                                                                  int64_t n_max) {
  std::map<std::pair<int64_t, ir::DType>, ir::Value*> masks;  // (window, dtype) -> run-time mask
  auto mask_for = [&](int64_t window, ir::DType dtype) {  // placed first; the caller sorts the graph
    ir::Value*& m = masks[{window, dtype}];
    if (!m) m = runtime_mask(g, g.nodes().front(), input_pos, seq, n_max, window, dtype);
    return m;
  };
  std::vector<std::pair<std::string, int64_t>> masked;
  for (ir::Node* n : g.nodes()) {
    if (!n->is_onnx("Softmax") || !n->input(0)->type().known() || !n->input(0)->shape().is_static()) continue;
    const auto s = n->input(0)->shape().sizes();
    if (s.empty() || s.back() != n_max) continue;
    const ir::DType dt = n->input(0)->dtype();
    Found f = find_mask(g, n, input_pos, seq, n_max);
    if (f.add && f.kind.reason.empty()) {
      f.add->set_input(f.side, mask_for(f.kind.window, dt));
      masked.emplace_back(n->name(), f.kind.window);
      continue;
    }
    if (f.add)
      throw PassError(fmt::format("--max-seq-len: softmax '{}' over the cache: its mask '{}' {}", n->name(),
                                  f.add->input(f.side)->name(), f.kind.reason));
    if (seq != 1)
      throw PassError(fmt::format("--max-seq-len: softmax '{}' over the cache: no mask added to its scores was found "
                                  "(an additive mask computed from the positions is needed to hide rows not yet written)",
                                  n->name()));
    ir::Value* scores = n->input(0);
    n->set_input(0, add_onnx_node(g, n, "Add", {scores, mask_for(0, dt)}, scores->type()));
    masked.emplace_back(n->name(), 0);
  }
  return masked;
}

}  // namespace vkc::passes::attention
