// Rotary position embeddings as exporters write them, on rank-4 x ([1, S, H, D] or [1, H, S, D]):
//   halves (HF rotate_half):  x * cos + Concat(-x[.., R/2:R], x[.., :R/2]) * sin  (R = D, or R < D with
//                             x[.., :R] rotated and Concat(rotated, x[.., R:]) around it)
//                             -> et_vk.apply_rotary_emb_hf(x, x', cos [S, R], sin [S, R], start_pos = 0)
//   pairs (Meta/GPT-J):       x5 = Reshape(x, [.., D/2, 2]); xr, xi = its two last-axis elements;
//                             Reshape(Concat(Unsqueeze(xr*cos - xi*sin), Unsqueeze(xr*sin + xi*cos), axis -1))
//                             -> et_vk.apply_rotary_emb(x, x', cos [S, D/2], sin [S, D/2])
// cos/sin may be any tensors that broadcast over batch 1 and the head axis (constant or computed).
// The runtime ops rotate a query and a key in one call: two matches that share cos and sin are paired
// (the one with more heads as xq); a lone match passes its x twice. Its sequence axis must be 1 (the
// runtime's [B, S, H, D]); a [1, H, S, D] x is permuted around the op (or read before the Transpose that
// made it). The halves op reads only the first R/2 table columns, so it is used only where the table
// provably repeats its halves (HF's Concat(freqs, freqs), or a constant checked value by value).
#include <algorithm>
#include <functional>
#include <set>

#include "../pattern_utils.h"
#include "vkc/passes/passes.h"

namespace vkc::passes {
namespace {

using Ints = std::vector<int64_t>;

int64_t last_dim(const ir::Value* v) { return v->shape().sizes().back(); }

bool static_fp(const ir::Value* v) {
  return v && v->type().known() && v->shape().is_static() && ir::is_float(v->dtype()) && v->shape().rank() > 0;
}

// Whether the axis list / attribute of `n` (at input `index` from opset `from`) is exactly the last axis.
bool on_last_axis(const ir::Node* n, int64_t rank, const char* attr, size_t index, int64_t from) {
  std::optional<Ints> axes;
  if (n->opset() < from) {
    if (n->has_attr(attr)) axes = n->attr_ints(attr);
  } else if (n->num_inputs() > index && n->input(index)) {
    axes = constant_ints(n->input(index));
  }
  return axes && axes->size() == 1 && ((*axes)[0] == -1 || (*axes)[0] == rank - 1);
}

bool concat_on_last_axis(const ir::Node* n) {
  if (!n || !n->is_onnx("Concat") || !n->output(0)->type().known()) return false;
  const int64_t axis = n->attr_int("axis", 0), rank = static_cast<int64_t>(n->output(0)->shape().rank());
  return axis == -1 || axis == rank - 1;
}

// [start, end) of a Slice over only the last axis with step 1 (bounds clamped to the dim).
std::optional<std::pair<int64_t, int64_t>> last_axis_slice(const ir::Node* n) {
  if (!n || !n->is_onnx("Slice") || !static_fp(n->input(0))) return std::nullopt;
  const int64_t rank = static_cast<int64_t>(n->input(0)->shape().rank()), dim = last_dim(n->input(0));
  std::optional<Ints> starts, ends, axes, steps = Ints{1};
  if (n->opset() < 10) {
    starts = n->attr_ints("starts"), ends = n->attr_ints("ends");
    axes = n->has_attr("axes") ? n->attr_ints("axes") : Ints{0};
  } else {
    starts = constant_ints(n->input(1)), ends = constant_ints(n->input(2));
    axes = n->num_inputs() > 3 && n->input(3) ? constant_ints(n->input(3)) : Ints{0};
    if (n->num_inputs() > 4 && n->input(4)) steps = constant_ints(n->input(4));
  }
  if (!starts || !ends || !axes || !steps || starts->size() != 1 || ends->size() != 1 || axes->size() != 1 ||
      steps->size() != 1 || (*steps)[0] != 1 || ((*axes)[0] != -1 && (*axes)[0] != rank - 1))
    return std::nullopt;
  auto clamp = [dim](int64_t i) { return std::clamp(i < 0 ? i + dim : i, int64_t{0}, dim); };
  return std::pair{clamp((*starts)[0]), clamp((*ends)[0])};
}

// v's producer when it is an ONNX `op`; else null.
ir::Node* made_by(const ir::Value* v, std::string_view op) {
  ir::Node* p = v ? v->producer() : nullptr;
  return p && p->is_onnx(op) ? p : nullptr;
}

// -v: Neg(v) or v * -1.
ir::Value* negated(const ir::Value* v) {
  if (ir::Node* n = made_by(v, "Neg")) return n->input(0);
  if (ir::Node* n = made_by(v, "Mul"))
    for (size_t side : {0u, 1u})
      if (constant_scalar(n->input(side)) == -1.0) return n->input(1 - side);
  return nullptr;
}

// Whether the last axis of `v` (of even size) holds the same values in both halves: HF tables are
// cos/sin of Concat(freqs, freqs). Followed back through elementwise maps and row selections.
bool repeats_halves(const ir::Value* v, int depth = 0) {
  if (!v || !static_fp(v) || depth > 16) return false;
  const int64_t cols = last_dim(v), half = cols / 2;
  if (cols % 2 != 0) return false;
  if (auto c = constant_floats(v)) {
    for (size_t row = 0; row < c->size(); row += static_cast<size_t>(cols))
      for (int64_t i = 0; i < half; ++i)
        if ((*c)[row + i] != (*c)[row + i + half]) return false;
    return true;
  }
  ir::Node* p = v->producer();
  if (!p || p->domain() != ir::kOnnxDomain) return false;
  const std::string& op = p->op_type();
  if (op == "Concat") return concat_on_last_axis(p) && p->num_inputs() == 2 && p->input(0) == p->input(1);
  if (op == "Cos" || op == "Sin" || op == "Cast" || op == "Neg" || op == "Identity")
    return repeats_halves(p->input(0), depth + 1);
  if (op == "Mul" || op == "Div") {  // scaled by a constant scalar (HF attention_scaling)
    if (constant_scalar(p->input(1))) return repeats_halves(p->input(0), depth + 1);
    if (op == "Mul" && constant_scalar(p->input(0))) return repeats_halves(p->input(1), depth + 1);
    return false;
  }
  // Shape changes that keep the last axis whole and unmixed.
  const ir::Value* in = p->input(0);
  if (!static_fp(in) || last_dim(in) != cols) return false;
  if (op == "Unsqueeze" || op == "Squeeze" || op == "Reshape" || op == "Expand" || op == "Flatten")
    return repeats_halves(in, depth + 1);
  if (op == "Gather") {
    const int64_t axis = p->attr_int("axis", 0), in_rank = static_cast<int64_t>(in->shape().rank());
    return axis != -1 && axis != in_rank - 1 && repeats_halves(in, depth + 1);
  }
  if (op == "Slice" && !last_axis_slice(p)) {
    auto axes = p->opset() < 10 ? std::optional(p->attr_ints("axes"))
                                : (p->num_inputs() > 3 && p->input(3) ? constant_ints(p->input(3)) : std::nullopt);
    if (!axes) return false;
    const int64_t in_rank = static_cast<int64_t>(in->shape().rank());
    for (int64_t a : *axes)
      if (a == -1 || a == in_rank - 1) return false;
    return repeats_halves(in, depth + 1);
  }
  return false;
}

struct Match {
  bool halves = false;
  ir::Value* x = nullptr;    // the rank-4 input
  ir::Value* out = nullptr;  // the value the op replaces
  ir::Value* cos = nullptr;
  ir::Value* sin = nullptr;
  int seq_axis = 1;          // 1: [1, S, H, D]; 2: [1, H, S, D]
  int64_t cols = 0;          // table columns: R (halves) or D/2 (pairs)
  std::vector<ir::Node*> nodes;
  bool either_axis = false;  // x is [1, 1, 1, D] (one head, one token): both readings hold
};

// The sequence axis (1 or 2) of x [1, d1, d2, D] that `table` (broadcasting to x with `cols` columns)
// varies along, or 0 when it does not fit the runtime's [S, cols] table.
int seq_axis_of(const ir::Value* x, const ir::Value* table, int64_t cols) {
  if (!static_fp(table) || table->shape().rank() > 4 || last_dim(table) != cols) return 0;
  Ints t = table->shape().sizes();
  t.insert(t.begin(), 4 - t.size(), 1);
  const Ints d = x->shape().sizes();
  if (d[0] != 1 || t[0] != 1) return 0;
  // One table row (a decode step, S = 1): the sequence axis is whichever of x's is 1.
  if (t[1] == 1 && t[2] == 1 && (d[1] == 1 || d[2] == 1)) return d[1] == 1 ? 1 : 2;
  if (t[1] == d[1] && t[2] == 1 && (d[1] > 1 || d[2] == 1)) return 1;
  if (t[2] == d[2] && t[1] == 1 && d[2] > 1) return 2;
  return 0;
}

// Every value the pattern computes internally is read only inside it (and is no graph output).
bool self_contained(const ir::Graph& g, const Match& m) {
  const std::set<const ir::Node*> inside(m.nodes.begin(), m.nodes.end());
  for (const ir::Node* n : m.nodes)
    for (const ir::Value* v : n->outputs()) {
      if (v == m.out) continue;
      if (g.is_output(v)) return false;
      for (const ir::Node* u : g.users(v))
        if (!inside.count(u)) return false;
    }
  return true;
}

bool finish(const ir::Graph& g, Match& m) {
  if (!static_fp(m.x) || m.x->shape().rank() != 4 || m.cos->shape() != m.sin->shape() ||
      m.x->dtype() != ir::DType::Float32)
    return false;
  m.seq_axis = seq_axis_of(m.x, m.cos, m.cols);
  m.either_axis = m.x->shape().sizes()[1] == 1 && m.x->shape().sizes()[2] == 1;
  // The runtime shaders work on whole texel pairs (pairs) or texels of the rotated half (halves).
  const bool aligned = m.halves ? m.cols % 8 == 0 : last_dim(m.x) % 8 == 0;
  return m.seq_axis != 0 && aligned && self_contained(g, m);
}

// ---- halves: Add(Mul(x, cos), Mul(Concat(-x2, x1), sin)) [inside Concat(.., x[.., R:])]
bool match_halves(const ir::Graph& g, ir::Node* add, Match& m) {
  for (size_t side : {0u, 1u}) {
    ir::Node* direct = made_by(add->input(side), "Mul");
    ir::Node* rotated = made_by(add->input(1 - side), "Mul");
    if (!direct || !rotated) continue;
    for (size_t r : {0u, 1u}) {
      ir::Node* cat = made_by(rotated->input(r), "Concat");
      if (!concat_on_last_axis(cat) || cat->num_inputs() != 2) continue;
      ir::Value* x2 = negated(cat->input(0));
      ir::Node* hi = made_by(x2, "Slice");
      ir::Node* lo = made_by(cat->input(1), "Slice");
      if (!hi || !lo || hi->input(0) != lo->input(0)) continue;
      ir::Value* x = lo->input(0);
      const auto lo_range = last_axis_slice(lo), hi_range = last_axis_slice(hi);
      const int64_t rot = static_fp(x) ? last_dim(x) : 0;
      if (!lo_range || !hi_range || rot % 2 != 0 || *lo_range != std::pair<int64_t, int64_t>{0, rot / 2} ||
          *hi_range != std::pair<int64_t, int64_t>{rot / 2, rot})
        continue;
      ir::Value* cos = other_operand(direct, x);
      if (!cos) continue;
      m = Match{true, x, add->output(0), cos, rotated->input(1 - r), 1, rot,
                {add, direct, rotated, cat, cat->input(0)->producer(), lo, hi}};
      if (!repeats_halves(m.cos) || !repeats_halves(m.sin)) return false;
      // Partial rotation: x = q[.., :R] and the sum is concatenated with q[.., R:].
      if (ir::Node* rot_slice = made_by(x, "Slice"); rot_slice && last_axis_slice(rot_slice)) {
        ir::Value* q = rot_slice->input(0);
        ir::Node* whole = sole_user(g, add->output(0), "Concat");
        ir::Node* pass = whole && whole->num_inputs() == 2 && whole->input(0) == add->output(0)
                             ? made_by(whole->input(1), "Slice")
                             : nullptr;
        if (*last_axis_slice(rot_slice) == std::pair<int64_t, int64_t>{0, rot} && concat_on_last_axis(whole) && pass &&
            pass->input(0) == q && last_axis_slice(pass) == std::pair<int64_t, int64_t>{rot, last_dim(q)}) {
          m.x = q;
          m.out = whole->output(0);
          m.nodes.insert(m.nodes.end(), {rot_slice, pass, whole});
        }
      }
      return finish(g, m);
    }
  }
  return false;
}

// ---- pairs
// (x5, j) when v is element j of x5's last axis (of size 2): Gather(x5, j, axis -1), or Squeeze(-1) of
// Slice(x5, j:j+1) or of Split(x5, axis -1)'s output j. `nodes` collects what it passed.
std::optional<std::pair<ir::Value*, int64_t>> pair_element(const ir::Value* v, std::vector<ir::Node*>& nodes) {
  ir::Node* p = v ? v->producer() : nullptr;
  if (!p || p->domain() != ir::kOnnxDomain) return std::nullopt;
  auto pairs_input = [](const ir::Value* x5) { return static_fp(x5) && last_dim(x5) == 2; };
  if (p->is_onnx("Gather")) {
    const ir::Value* x5 = p->input(0);
    const auto j = constant_ints(p->input(1));
    const int64_t axis = p->attr_int("axis", 0);
    if (!pairs_input(x5) || !j || j->size() != 1 || p->input(1)->shape().rank() != 0 ||
        (axis != -1 && axis != static_cast<int64_t>(x5->shape().rank()) - 1))
      return std::nullopt;
    nodes.push_back(p);
    return std::pair{p->input(0), ((*j)[0] + 2) % 2};
  }
  if (!p->is_onnx("Squeeze") || !static_fp(p->input(0)) ||
      !on_last_axis(p, static_cast<int64_t>(p->input(0)->shape().rank()), "axes", 1, 13))
    return std::nullopt;
  ir::Node* q = p->input(0)->producer();
  if (!q) return std::nullopt;
  if (auto range = last_axis_slice(q); range && range->second == range->first + 1 && pairs_input(q->input(0))) {
    nodes.insert(nodes.end(), {p, q});
    return std::pair{q->input(0), range->first};
  }
  if (q->is_onnx("Split") && q->outputs().size() == 2 && pairs_input(q->input(0)) &&
      (q->attr_int("axis", 0) == -1 || q->attr_int("axis", 0) == static_cast<int64_t>(q->input(0)->shape().rank()) - 1)) {
    nodes.insert(nodes.end(), {p, q});
    return std::pair{q->input(0), q->output(0) == p->input(0) ? 0 : 1};
  }
  return std::nullopt;
}

// (a, b) operands of a Mul node `v` is made by, in either order, matched against `a`.
ir::Value* times(const ir::Value* v, const ir::Value* a, std::vector<ir::Node*>& nodes) {
  ir::Node* m = made_by(v, "Mul");
  ir::Value* b = m ? other_operand(m, a) : nullptr;
  if (b) nodes.push_back(m);
  return b;
}

bool match_pairs(const ir::Graph& g, ir::Node* cat, Match& m) {
  if (!concat_on_last_axis(cat) || cat->num_inputs() != 2) return false;
  ir::Node* ure = made_by(cat->input(0), "Unsqueeze");
  ir::Node* uim = made_by(cat->input(1), "Unsqueeze");
  ir::Node* flat = sole_user(g, cat->output(0), "Reshape");
  ir::Node* sub = ure ? made_by(ure->input(0), "Sub") : nullptr;
  ir::Node* add = uim ? made_by(uim->input(0), "Add") : nullptr;
  if (!flat || !sub || !add) return false;
  const auto rank5 = static_cast<int64_t>(cat->output(0)->shape().rank());
  if (!on_last_axis(ure, rank5, "axes", 1, 13) || !on_last_axis(uim, rank5, "axes", 1, 13)) return false;
  std::vector<ir::Node*> nodes = {flat, cat, ure, uim, sub, add};
  // sub = xr*cos - xi*sin: find xr, xi through the first product.
  ir::Node* first = made_by(sub->input(0), "Mul");
  if (!first) return false;
  for (size_t side : {0u, 1u}) {
    std::vector<ir::Node*> re_nodes;
    auto re = pair_element(first->input(side), re_nodes);
    if (!re || re->second != 0) continue;
    ir::Value* xr = first->input(side);
    ir::Value* cos = first->input(1 - side);
    ir::Node* second = made_by(sub->input(1), "Mul");
    if (!second) return false;
    for (size_t s2 : {0u, 1u}) {
      std::vector<ir::Node*> elems = re_nodes;
      auto im = pair_element(second->input(s2), elems);
      if (!im || im->first != re->first || im->second != 1) continue;
      ir::Value* xi = second->input(s2);
      ir::Value* sin = second->input(1 - s2);
      std::vector<ir::Node*> muls = {first, second};
      // add = xr*sin + xi*cos, in either order.
      for (size_t a : {0u, 1u}) {
        std::vector<ir::Node*> more;
        if (times(add->input(a), xr, more) != sin || times(add->input(1 - a), xi, more) != cos) continue;
        ir::Node* split = made_by(re->first, "Reshape");
        if (!split || !static_fp(split->input(0))) return false;
        ir::Value* x = split->input(0);
        const int64_t d = last_dim(x);
        if (x->shape() != flat->output(0)->shape() || re->first->shape().sizes() != [&] {
              Ints s = x->shape().sizes();
              s.back() = d / 2;
              s.push_back(2);
              return s;
            }())
          return false;
        nodes.push_back(split);
        nodes.insert(nodes.end(), muls.begin(), muls.end());
        nodes.insert(nodes.end(), more.begin(), more.end());
        nodes.insert(nodes.end(), elems.begin(), elems.end());
        std::sort(nodes.begin(), nodes.end());
        nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
        m = Match{false, x, flat->output(0), cos, sin, 1, d / 2, nodes};
        return finish(g, m);
      }
    }
  }
  return false;
}

// Whether `v` is computed from `target` (walking producers).
bool depends_on(const ir::Value* v, const ir::Value* target) {
  std::set<const ir::Node*> seen;
  std::vector<const ir::Value*> todo = {v};
  while (!todo.empty()) {
    const ir::Value* cur = todo.back();
    todo.pop_back();
    if (cur == target) return true;
    const ir::Node* p = cur ? cur->producer() : nullptr;
    if (!p || !seen.insert(p).second) continue;
    for (const ir::Value* in : p->inputs()) todo.push_back(in);
  }
  return false;
}

// Whether a and b rotate with the same tables in one call; a [1, 1, 1, D] x (a key of one head at
// one token: Falcon's multi-query attention, Gemma) takes its partner's sequence axis, so the program
// is the same at one token as at several.
bool can_pair(Match& a, Match& b) {
  const Ints da = a.x->shape().sizes(), db = b.x->shape().sizes();
  int axis = a.seq_axis;
  if (a.seq_axis != b.seq_axis) {
    if (b.either_axis) axis = a.seq_axis;
    else if (a.either_axis) axis = b.seq_axis;
    else return false;
  }
  if (!(a.halves == b.halves && a.cos == b.cos && a.sin == b.sin && da[3] == db[3] && da[axis] == db[axis] &&
        !depends_on(a.x, b.out) && !depends_on(b.x, a.out)))
    return false;
  a.seq_axis = b.seq_axis = axis;
  return true;
}

// x as [1, S, H, D]: itself, the input of the Transpose that made it [1, H, S, D], or a new permute.
ir::Value* to_seq_major(ir::Graph& g, const Match& m) {
  if (m.seq_axis == 1) return m.x;
  if (ir::Node* t = made_by(m.x, "Transpose"); t && t->attr_ints("perm") == Ints{0, 2, 1, 3}) return t->input(0);
  const Ints d = m.x->shape().sizes();
  ir::Node* p = g.add_node(ir::kVulkanDomain, "aten.permute_copy.default", {m.x},
                           {{m.x->dtype(), ir::Shape::of({d[0], d[2], d[1], d[3]})}}, g.unique_name("rope_in"));
  p->attrs() = {{"dims", Ints{0, 2, 1, 3}}};
  return p->output(0);
}

// The table as [S, cols]: one view of it, shared by every layer's rotary (a view per layer cost
// a dispatch per layer where the graph's own tables were not merged, a resizing program's).
ir::Value* table(ir::Graph& g, ir::Value* t, int64_t rows, int64_t cols) {
  const Ints shape = {rows, cols};
  if (t->shape().sizes() == shape) return t;
  if (t->is_constant()) return g.add_constant(g.unique_name(t->name()), {t->dtype(), ir::Shape::of(shape)}, t->data());
  for (ir::Node* u : g.users(t))
    if (u->op_type() == "aten.view_copy.default" && u->domain() == ir::kVulkanDomain && u->outputs().size() == 1 &&
        u->attr_ints("size") == shape && u->output(0)->shape().sizes() == shape)
      return u->output(0);
  ir::Node* v = g.add_node(ir::kVulkanDomain, "aten.view_copy.default", {t}, {{t->dtype(), ir::Shape::of(shape)}},
                           g.unique_name(t->name() + "_table"));
  v->attrs() = {{"size", shape}};
  return v->output(0);
}

void emit(ir::Graph& g, const Match& q, const Match* k) {
  ir::Value* xq = to_seq_major(g, q);
  ir::Value* xk = k ? to_seq_major(g, *k) : xq;
  const int64_t rows = xq->shape().sizes()[1];
  std::vector<ir::Value*> ins = {xq, xk, table(g, q.cos, rows, q.cols), table(g, q.sin, rows, q.cols)};
  ir::Node* rope = g.add_node(ir::kVulkanDomain,
                              q.halves ? "et_vk.apply_rotary_emb_hf.default" : "et_vk.apply_rotary_emb.default", ins,
                              {xq->type(), xk->type()}, g.unique_name(q.out->name() + "_rope"));
  if (q.halves) rope->attrs() = {{"start_pos", int64_t{0}}};
  for (const auto& [m, out] : {std::pair{&q, rope->output(0)}, std::pair{k, rope->output(1)}}) {
    if (!m) continue;
    ir::Value* result = out;
    if (m->seq_axis == 2) {
      ir::Node* back = g.add_node(ir::kVulkanDomain, "aten.permute_copy.default", {out}, {m->out->type()},
                                  g.unique_name(m->out->name() + "_bhsd"));
      back->attrs() = {{"dims", Ints{0, 2, 1, 3}}};
      result = back->output(0);
    }
    g.replace_all_uses(m->out, result);
    for (ir::Node* n : m->nodes) g.remove_node(n);
  }
}

}  // namespace

void fuse_rotary_embedding(ir::Graph& g, PassContext&) {
  std::vector<Match> found;
  std::set<const ir::Node*> taken;
  for (ir::Node* n : g.nodes()) {
    if (taken.count(n)) continue;
    Match m;
    if ((n->is_onnx("Add") && match_halves(g, n, m)) || (n->is_onnx("Concat") && match_pairs(g, n, m))) {
      if (std::any_of(m.nodes.begin(), m.nodes.end(), [&](const ir::Node* p) { return taken.count(p); })) continue;
      taken.insert(m.nodes.begin(), m.nodes.end());
      found.push_back(std::move(m));
    }
  }
  if (found.empty()) return;
  std::vector<bool> done(found.size(), false);
  for (size_t i = 0; i < found.size(); ++i) {
    if (done[i]) continue;
    done[i] = true;
    const Match* partner = nullptr;
    for (size_t j = i + 1; j < found.size() && !partner; ++j)
      if (!done[j] && can_pair(found[i], found[j])) {
        done[j] = true;
        partner = &found[j];
      }
    // xq is the one with more heads (the runtime stops xk's rows at its own extent).
    const int head_axis = found[i].seq_axis == 1 ? 2 : 1;
    if (partner && partner->x->shape().sizes()[head_axis] > found[i].x->shape().sizes()[head_axis])
      emit(g, *partner, &found[i]);
    else
      emit(g, found[i], partner);
  }
  g.topo_sort();
}

}  // namespace vkc::passes
