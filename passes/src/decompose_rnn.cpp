// decompose-rnn: LSTM, GRU and RNN over a static sequence, unrolled into the per-step equations the
// ONNX spec defines them by (Gemm / Add / Mul / Slice / activations), so each step runs as linears
// and elementwise ops like any other graph:
//   - the input projection of every step is one Gemm over [S * B, I] with both biases folded in
//     (GRU's recurrent h-gate bias stays inside the reset product under linear_before_reset);
//   - each step adds H_{t-1} * R^T (skipped while the state is the zero default) and splits the
//     gates by Slice;
//   - directions forward, reverse and bidirectional, layout 0 and 1, clip, input_forget, peepholes,
//     initial states, and the activations the spec lists (with activation_alpha/beta consumed in
//     order by the functions that take them).
// W, R, B and P must be constants; sequence_lens, when given, must be a constant equal to the
// sequence length in every batch. Anything else stays and is reported by lowering.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <optional>
#include <variant>

#include "constants.h"
#include "vkc/passes/passes.h"

namespace vkc::passes {
namespace {

using Ints = std::vector<int64_t>;
constexpr int64_t kMaxUnrolledSteps = 1024;  // sequence length x directions

struct Activation {
  std::string op;  // lower case as the spec's names, e.g. "sigmoid"
  float alpha = 0, beta = 0;
};

// The spec's activation names with the number of alpha / beta values each takes and their defaults.
struct ActivationInfo {
  const char* name;
  int alphas, betas;
  float alpha, beta;
};
constexpr ActivationInfo kActivations[] = {
    {"sigmoid", 0, 0, 0, 0},    {"tanh", 0, 0, 0, 0},          {"relu", 0, 0, 0, 0},
    {"softsign", 0, 0, 0, 0},   {"softplus", 0, 0, 0, 0},      {"hardsigmoid", 1, 1, 0.2f, 0.5f},
    {"leakyrelu", 1, 0, 0.01f, 0}, {"elu", 1, 0, 1.0f, 0},    {"thresholdedrelu", 1, 0, 1.0f, 0},
    {"scaledtanh", 1, 1, 1.0f, 1.0f}, {"affine", 1, 1, 1.0f, 0},
};

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// The node's activations, `per_direction` for each of `dirs` directions; error text on failure.
std::variant<std::vector<Activation>, std::string> activations(const ir::Node* n, const std::vector<std::string>& defaults,
                                                               int64_t dirs) {
  std::vector<std::string> names = defaults;
  if (const ir::Attribute* a = n->attr("activations")) {
    if (const auto* v = std::get_if<std::vector<std::string>>(a)) names = *v;
  }
  const size_t per = defaults.size();
  if (dirs == 2 && names.size() == per && !n->attr("activations")) names.insert(names.end(), defaults.begin(), defaults.end());
  // One direction's list for a bidirectional node (the spec wants both; onnxruntime refuses it):
  // taken as both directions', alpha and beta included.
  const bool shared = dirs == 2 && names.size() == per;
  if (!shared && names.size() != per * static_cast<size_t>(dirs))
    return fmt::format("{} activations given, {} expected", names.size(), per * dirs);
  std::vector<double> alphas, betas;
  if (const ir::Attribute* a = n->attr("activation_alpha"))
    if (const auto* v = std::get_if<std::vector<double>>(a)) alphas = *v;
  if (const ir::Attribute* a = n->attr("activation_beta"))
    if (const auto* v = std::get_if<std::vector<double>>(a)) betas = *v;
  size_t ai = 0, bi = 0;
  std::vector<Activation> out;
  for (const std::string& raw : names) {
    const std::string name = lower(raw);
    const auto* info = std::find_if(std::begin(kActivations), std::end(kActivations),
                                    [&](const ActivationInfo& i) { return name == i.name; });
    if (info == std::end(kActivations)) return fmt::format("activation '{}' is not one the spec defines", raw);
    Activation act{name, info->alpha, info->beta};
    if (info->alphas && ai < alphas.size()) act.alpha = static_cast<float>(alphas[ai++]);
    if (info->betas && bi < betas.size()) act.beta = static_cast<float>(betas[bi++]);
    out.push_back(act);
  }
  if (shared) {
    const std::vector<Activation> one = out;
    out.insert(out.end(), one.begin(), one.end());
  }
  return out;
}

class Unroller {
 public:
  Unroller(ir::Graph& g, ir::Node* n, ir::DType dtype) : g_(g), n_(n), dtype_(dtype) {}

  ir::Value* node(const char* op, std::vector<ir::Value*> ins, const Ints& shape, ir::AttributeMap attrs = {}) {
    return add_onnx_node(g_, n_, op, std::move(ins), {dtype_, ir::Shape::of(shape)}, std::move(attrs));
  }
  ir::Value* ints(const Ints& v) { return add_i64_constant(g_, n_->name() + "_i", {int64_t(v.size())}, v); }
  ir::Value* floats(const Ints& shape, const std::vector<float>& v) {
    return add_float_constant(g_, n_->name() + "_c", shape, v, dtype_);
  }
  ir::Value* scalar(float v) { return floats({}, {v}); }
  ir::Value* slice(ir::Value* x, int64_t axis, int64_t begin, int64_t end) {
    Ints shape = x->shape().sizes();
    if (begin == 0 && end == shape[axis]) return x;
    shape[axis] = end - begin;
    return node("Slice", {x, ints({begin}), ints({end}), ints({axis})}, shape);
  }
  ir::Value* reshape(ir::Value* x, const Ints& shape) {
    return x->shape().sizes() == shape ? x : node("Reshape", {x, ints(shape)}, shape);
  }
  ir::Value* binary(const char* op, ir::Value* a, ir::Value* b) { return node(op, {a, b}, a->shape().sizes()); }
  // x * W^T (+ bias): a linear with the constant [N, K] weight.
  ir::Value* linear(ir::Value* x, const std::vector<float>& w, int64_t n_out, const std::vector<float>* bias) {
    const int64_t k = x->shape().sizes()[1];
    std::vector<ir::Value*> ins{x, floats({n_out, k}, w)};
    if (bias) ins.push_back(floats({n_out}, *bias));
    return node("Gemm", std::move(ins), {x->shape().sizes()[0], n_out}, {{"transB", int64_t{1}}});
  }
  ir::Value* clip(ir::Value* x, std::optional<float> c) {
    return c ? node("Clip", {x, scalar(-*c), scalar(*c)}, x->shape().sizes()) : x;
  }
  ir::Value* apply(const Activation& a, ir::Value* x) {
    const Ints s = x->shape().sizes();
    const std::string& op = a.op;
    if (op == "sigmoid") return node("Sigmoid", {x}, s);
    if (op == "tanh") return node("Tanh", {x}, s);
    if (op == "relu") return node("Relu", {x}, s);
    if (op == "softsign") return node("Softsign", {x}, s);
    if (op == "softplus") return node("Softplus", {x}, s);
    if (op == "hardsigmoid") return node("HardSigmoid", {x}, s, {{"alpha", double{a.alpha}}, {"beta", double{a.beta}}});
    if (op == "leakyrelu") return node("LeakyRelu", {x}, s, {{"alpha", double{a.alpha}}});
    if (op == "elu") return node("Elu", {x}, s, {{"alpha", double{a.alpha}}});
    if (op == "thresholdedrelu") return node("ThresholdedRelu", {x}, s, {{"alpha", double{a.alpha}}});
    if (op == "scaledtanh")  // alpha * tanh(beta * x)
      return binary("Mul", node("Tanh", {binary("Mul", x, scalar(a.beta))}, s), scalar(a.alpha));
    return binary("Add", binary("Mul", x, scalar(a.alpha)), scalar(a.beta));  // affine
  }

 private:
  ir::Graph& g_;
  ir::Node* n_;
  ir::DType dtype_;
};

enum class Kind { kLstm, kGru, kRnn };

// Rows [begin, begin + count) of a row-major matrix with `cols` columns.
std::vector<float> rows(const std::vector<float>& m, int64_t cols, int64_t begin, int64_t count) {
  return {m.begin() + begin * cols, m.begin() + (begin + count) * cols};
}

std::optional<std::string> decompose(ir::Graph& g, ir::Node* n, Kind kind) {
  const int64_t gates = kind == Kind::kLstm ? 4 : kind == Kind::kGru ? 3 : 1;
  ir::Value* x = n->input(0);
  if (!x || !x->type().known() || !ir::is_float(x->dtype()) || !x->shape().is_static() || x->shape().rank() != 3)
    return std::string("X has no static rank-3 float shape");
  const ir::DType dt = x->dtype();
  const bool batch_first = n->attr_int("layout", 0) != 0;
  const Ints xs = x->shape().sizes();
  const int64_t S = batch_first ? xs[1] : xs[0], B = batch_first ? xs[0] : xs[1], I = xs[2];
  const std::string direction = n->attr_string("direction", "forward");
  if (direction != "forward" && direction != "reverse" && direction != "bidirectional")
    return fmt::format("direction '{}' is not one the spec defines", direction);
  const int64_t D = direction == "bidirectional" ? 2 : 1;
  const auto w = constant_floats(n->input(1)), r = constant_floats(n->input(2));
  if (!w || !r) return std::string("W and R must be constants");
  const Ints rs = n->input(2)->shape().sizes();
  if (rs.size() != 3 || rs[0] != D) return std::string("R's shape does not match the direction");
  const int64_t H = n->attr_int("hidden_size", rs[2]), GH = gates * H;
  if (H <= 0 || rs[1] != GH || rs[2] != H || static_cast<int64_t>(w->size()) != D * GH * I)
    return fmt::format("W / R shapes do not match {} gates of hidden size {} over input size {}", gates, H, I);
  if (S * D > kMaxUnrolledSteps) return fmt::format("{} steps exceed the unrolling bound {}", S * D, kMaxUnrolledSteps);
  std::vector<float> bias(static_cast<size_t>(D * 2 * GH), 0.0f);
  if (ir::Value* b = n->input(3)) {
    auto bv = constant_floats(b);
    if (!bv || bv->size() != bias.size()) return std::string("B must be a constant of [directions, 2 * gates * hidden]");
    bias = *bv;
  }
  if (ir::Value* lens = n->input(4)) {
    const auto lv = constant_ints(lens);
    if (!lv || std::any_of(lv->begin(), lv->end(), [&](int64_t l) { return l != S; }))
      return std::string("sequence_lens must be a constant equal to the sequence length in every batch");
  }
  std::vector<float> peep;
  if (kind == Kind::kLstm && n->input(7)) {
    auto pv = constant_floats(n->input(7));
    if (!pv || static_cast<int64_t>(pv->size()) != D * 3 * H) return std::string("P must be a constant of [directions, 3 * hidden]");
    peep = *pv;
  }
  const std::vector<std::string> defaults = kind == Kind::kLstm  ? std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"}
                                            : kind == Kind::kGru ? std::vector<std::string>{"Sigmoid", "Tanh"}
                                                                 : std::vector<std::string>{"Tanh"};
  auto acts_or = activations(n, defaults, D);
  if (auto* e = std::get_if<std::string>(&acts_or)) return *e;
  const auto acts = std::get<std::vector<Activation>>(acts_or);
  std::optional<float> clip;
  if (n->has_attr("clip")) clip = static_cast<float>(n->attr_float("clip", 0.0));
  const bool input_forget = kind == Kind::kLstm && n->attr_int("input_forget", 0) != 0;
  const bool reset_after = kind == Kind::kGru && n->attr_int("linear_before_reset", 0) != 0;
  for (size_t i : {size_t{5}, size_t{6}})
    if (ir::Value* s = n->input(i); s && (!s->shape().is_static() || s->shape().sizes() != (batch_first ? Ints{B, D, H} : Ints{D, B, H})))
      return std::string("an initial state's shape does not match");

  Unroller u(g, n, dt);
  ir::Value* seq = batch_first ? u.node("Transpose", {x}, {S, B, I}, {{"perm", Ints{1, 0, 2}}}) : x;
  ir::Value* flat = u.reshape(seq, {S * B, I});
  // An initial state [D, B, H] (or [B, D, H]) of direction d as [B, H]; nullptr for the zero default.
  auto initial = [&](size_t input, int64_t d) -> ir::Value* {
    ir::Value* s = n->input(input);
    if (!s) return nullptr;
    return u.reshape(u.slice(s, batch_first ? 1 : 0, d, d + 1), {B, H});
  };
  std::vector<std::vector<ir::Value*>> ys(static_cast<size_t>(D));
  std::vector<ir::Value*> last_h, last_c;
  for (int64_t d = 0; d < D; ++d) {
    const Activation* a = &acts[static_cast<size_t>(d) * defaults.size()];
    const std::vector<float> wd = rows(*w, I, d * GH, GH), rd = rows(*r, H, d * GH, GH);
    const float* wb = bias.data() + d * 2 * GH;
    const float* rb = wb + GH;
    std::vector<float> in_bias(wb, wb + GH);
    for (int64_t i = 0; i < GH; ++i)
      if (!(reset_after && i >= 2 * H)) in_bias[i] += rb[i];
    ir::Value* proj = u.linear(flat, wd, GH, &in_bias);  // [S * B, G * H]
    ir::Value* h = initial(5, d);
    ir::Value* c = kind == Kind::kLstm ? initial(6, d) : nullptr;
    ys[d].resize(static_cast<size_t>(S));
    for (int64_t step = 0; step < S; ++step) {
      const int64_t t = d == 1 || direction == "reverse" ? S - 1 - step : step;
      ir::Value* xt = u.slice(proj, 0, t * B, (t + 1) * B);  // [B, G * H]
      if (kind == Kind::kGru) {
        // z, r from x and h; the candidate from x and r . (h R_h^T [+ Rb_h]) or (r . h) R_h^T.
        ir::Value* zr = u.slice(xt, 1, 0, 2 * H);
        if (h) zr = u.binary("Add", zr, u.linear(h, rows(rd, H, 0, 2 * H), 2 * H, nullptr));
        ir::Value* z = u.apply(a[0], u.clip(u.slice(zr, 1, 0, H), clip));
        ir::Value* rg = u.apply(a[0], u.clip(u.slice(zr, 1, H, 2 * H), clip));
        ir::Value* cand = u.slice(xt, 1, 2 * H, 3 * H);
        const std::vector<float> rh = rows(rd, H, 2 * H, H);
        if (reset_after) {
          const std::vector<float> rbh(rb + 2 * H, rb + 3 * H);
          ir::Value* hr = h ? u.linear(h, rh, H, &rbh) : u.floats({H}, rbh);
          cand = u.binary("Add", cand, u.binary("Mul", rg, hr));
        } else if (h) {
          cand = u.binary("Add", cand, u.linear(u.binary("Mul", rg, h), rh, H, nullptr));
        }
        ir::Value* ht = u.apply(a[1], u.clip(cand, clip));
        // H_t = (1 - z) . ht + z . H_{t-1} = ht + z . (H_{t-1} - ht)
        h = h ? u.binary("Add", ht, u.binary("Mul", z, u.binary("Sub", h, ht)))
              : u.binary("Sub", ht, u.binary("Mul", z, ht));
      } else if (kind == Kind::kRnn) {
        ir::Value* pre = h ? u.binary("Add", xt, u.linear(h, rd, H, nullptr)) : xt;
        h = u.apply(a[0], u.clip(pre, clip));
      } else {
        ir::Value* pre = h ? u.binary("Add", xt, u.linear(h, rd, GH, nullptr)) : xt;
        auto gate = [&](int64_t k) { return u.slice(pre, 1, k * H, (k + 1) * H); };  // i, o, f, c
        auto peephole = [&](ir::Value* v, int64_t k, ir::Value* cell) {
          if (peep.empty() || !cell) return v;
          const auto p = std::vector<float>(peep.begin() + (d * 3 + k) * H, peep.begin() + (d * 3 + k + 1) * H);
          return u.binary("Add", v, u.binary("Mul", cell, u.floats({H}, p)));
        };
        ir::Value* ig = u.apply(a[0], u.clip(peephole(gate(0), 0, c), clip));
        ir::Value* cand = u.apply(a[1], u.clip(gate(3), clip));
        ir::Value* next = u.binary("Mul", ig, cand);
        if (c) {
          ir::Value* fg = input_forget ? u.node("Sub", {u.scalar(1.0f), ig}, ig->shape().sizes())
                                       : u.apply(a[0], u.clip(peephole(gate(2), 2, c), clip));
          next = u.binary("Add", u.binary("Mul", fg, c), next);
        }
        c = next;
        ir::Value* og = u.apply(a[0], u.clip(peephole(gate(1), 1, c), clip));
        h = u.binary("Mul", og, u.apply(a[2], c));
      }
      ys[d][static_cast<size_t>(t)] = h;
    }
    last_h.push_back(h);
    last_c.push_back(c);
  }
  // [D][B, H] states -> [D, B, H] (or [B, D, H]).
  auto stack_states = [&](const std::vector<ir::Value*>& states) {
    std::vector<ir::Value*> parts;
    for (ir::Value* s : states) parts.push_back(u.reshape(s, {1, B, H}));
    ir::Value* all = D == 1 ? parts[0] : u.node("Concat", parts, {D, B, H}, {{"axis", int64_t{0}}});
    return batch_first ? u.node("Transpose", {all}, {B, D, H}, {{"perm", Ints{1, 0, 2}}}) : all;
  };
  auto used = [&](size_t i) {
    return i < n->outputs().size() && n->output(i) && (g.is_output(n->output(i)) || !g.users(n->output(i)).empty());
  };
  if (used(0)) {
    std::vector<ir::Value*> dirs;
    for (int64_t d = 0; d < D; ++d) {
      std::vector<ir::Value*> steps;
      for (ir::Value* y : ys[d]) steps.push_back(u.reshape(y, {1, 1, B, H}));
      dirs.push_back(S == 1 ? steps[0] : u.node("Concat", steps, {S, 1, B, H}, {{"axis", int64_t{0}}}));
    }
    ir::Value* y = D == 1 ? dirs[0] : u.node("Concat", dirs, {S, D, B, H}, {{"axis", int64_t{1}}});
    if (batch_first) y = u.node("Transpose", {y}, {B, S, D, H}, {{"perm", Ints{2, 0, 1, 3}}});
    g.replace_all_uses(n->output(0), y);
  }
  if (used(1)) g.replace_all_uses(n->output(1), stack_states(last_h));
  if (used(2)) g.replace_all_uses(n->output(2), stack_states(last_c));
  g.remove_node(n);
  return std::nullopt;
}

}  // namespace

void decompose_rnn(ir::Graph& g, PassContext& ctx) {
  for (ir::Node* n : g.nodes()) {
    std::optional<Kind> kind;
    if (n->is_onnx("LSTM")) kind = Kind::kLstm;
    if (n->is_onnx("GRU")) kind = Kind::kGru;
    if (n->is_onnx("RNN")) kind = Kind::kRnn;
    if (!kind) continue;
    if (auto why = decompose(g, n, *kind))  // lowering keeps this reason for the node
      ctx.not_lowered[n->name()] = fmt::format("{} is not unrolled: {}", n->op_type(), *why);
  }
}

}  // namespace vkc::passes
