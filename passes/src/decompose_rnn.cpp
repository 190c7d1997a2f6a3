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
// W, R, B and P may be constants (sliced here) or values computed at run time (sliced by Slice nodes).
// sequence_lens, constant or not, may differ between batch entries: each step then updates a batch
// entry's state only while the step is within its length (a 0/1 mask per entry), Y is zero past
// it, and a reverse direction starts at each entry's own last step (its inputs and outputs picked
// by Gather). Anything else stays and is reported by lowering.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>
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
  // x * W^T (+ bias): a linear with the [N, K] weight. A run-time weight is a MatMul by its
  // transpose (made once per weight) and an Add.
  ir::Value* linear(ir::Value* x, ir::Value* w, ir::Value* bias) {
    const Ints out{x->shape().sizes()[0], w->shape().sizes()[0]};
    if (!w->is_constant()) {
      ir::Value*& wt = transposed_[w];
      if (!wt) wt = node("Transpose", {w}, {w->shape().sizes()[1], out[1]}, {{"perm", Ints{1, 0}}});
      ir::Value* y = node("MatMul", {x, wt}, out);
      return bias ? binary("Add", y, bias) : y;
    }
    std::vector<ir::Value*> ins{x, w};
    if (bias) ins.push_back(bias);
    return node("Gemm", std::move(ins), out, {{"transB", int64_t{1}}});
  }
  ir::Value* typed(const char* op, std::vector<ir::Value*> ins, ir::DType dt, const Ints& shape, ir::AttributeMap a = {}) {
    return add_onnx_node(g_, n_, op, std::move(ins), {dt, ir::Shape::of(shape)}, std::move(a));
  }

  // A parameter tensor (W, R, B, P) as a flat buffer: its values when constant, sliced here, else the
  // run-time value as 1-D, sliced by Slice nodes.
  struct Flat {
    std::optional<std::vector<float>> c;
    ir::Value* v = nullptr;
  };
  Flat flat(ir::Value* x) {
    if (auto c = constant_floats(x)) return {std::move(c), nullptr};
    return {std::nullopt, reshape(x, {x->shape().numel()})};
  }
  Flat part(const Flat& f, int64_t begin, int64_t count) {
    if (f.c) return {std::vector<float>(f.c->begin() + begin, f.c->begin() + begin + count), nullptr};
    return {std::nullopt, slice(f.v, 0, begin, begin + count)};
  }
  Flat sum(const Flat& a, const Flat& b) {
    if (a.c && b.c) {
      std::vector<float> out = *a.c;
      for (size_t i = 0; i < out.size(); ++i) out[i] += (*b.c)[i];
      return {std::move(out), nullptr};
    }
    const int64_t n = a.c ? int64_t(a.c->size()) : a.v->shape().numel();
    return {std::nullopt, binary("Add", value(a, {n}), value(b, {n}))};
  }
  Flat join(const Flat& a, const Flat& b) {
    if (a.c && b.c) {
      std::vector<float> out = *a.c;
      out.insert(out.end(), b.c->begin(), b.c->end());
      return {std::move(out), nullptr};
    }
    const int64_t na = a.c ? int64_t(a.c->size()) : a.v->shape().numel();
    const int64_t nb = b.c ? int64_t(b.c->size()) : b.v->shape().numel();
    return {std::nullopt, node("Concat", {value(a, {na}), value(b, {nb})}, {na + nb}, {{"axis", int64_t{0}}})};
  }
  ir::Value* value(const Flat& f, const Ints& shape) { return f.c ? floats(shape, *f.c) : reshape(f.v, shape); }
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
  std::map<ir::Value*, ir::Value*> transposed_;
};

enum class Kind { kLstm, kGru, kRnn };

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
  // Parameters: static shapes of their element type (constant or not).
  auto param_ok = [&](const ir::Value* v, const Ints& shape) {
    return v->type().known() && v->dtype() == dt && v->shape().is_static() && v->shape().sizes() == shape;
  };
  ir::Value* wv = n->input(1);
  ir::Value* rv = n->input(2);
  if (!wv || !rv || !rv->type().known() || !rv->shape().is_static()) return std::string("R has no static shape");
  const Ints rs = rv->shape().sizes();
  if (rs.size() != 3 || rs[0] != D) return std::string("R's shape does not match the direction");
  const int64_t H = n->attr_int("hidden_size", rs[2]), GH = gates * H;
  if (H <= 0 || !param_ok(rv, {D, GH, H}) || !param_ok(wv, {D, GH, I}))
    return fmt::format("W / R are not {} tensors of {} gates of hidden size {} over input size {}", ir::dtype_name(dt),
                       gates, H, I);
  if (S * D > kMaxUnrolledSteps) return fmt::format("{} steps exceed the unrolling bound {}", S * D, kMaxUnrolledSteps);
  if (ir::Value* b = n->input(3); b && !param_ok(b, {D, 2 * GH}))
    return std::string("B is not a tensor of [directions, 2 * gates * hidden]");
  // sequence_lens: absent or all S is the plain unrolling; anything else masks (see the top).
  ir::Value* lens = n->input(4);
  std::optional<Ints> lens_c;
  if (lens) {
    if (!lens->type().known() || !ir::is_integer(lens->dtype()) || !lens->shape().is_static() ||
        lens->shape().sizes() != Ints{B})
      return fmt::format("sequence_lens is not an integer tensor of [batch] = [{}]", B);
    lens_c = constant_ints(lens);
    if (lens_c && std::any_of(lens_c->begin(), lens_c->end(), [&](int64_t l) { return l < 0 || l > S; }))
      return fmt::format("a sequence length lies outside 0..{}", S);
  }
  const bool masked = lens && !(lens_c && std::all_of(lens_c->begin(), lens_c->end(), [&](int64_t l) { return l == S; }));
  if (kind == Kind::kLstm && n->input(7) && !param_ok(n->input(7), {D, 3 * H}))
    return std::string("P is not a tensor of [directions, 3 * hidden]");
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
  using Flat = Unroller::Flat;
  const Flat w = u.flat(wv), r = u.flat(rv);
  const Flat bias = n->input(3) ? u.flat(n->input(3)) : Flat{std::vector<float>(size_t(D * 2 * GH), 0.0f), nullptr};
  const std::optional<Flat> peep = kind == Kind::kLstm && n->input(7) ? std::optional(u.flat(n->input(7))) : std::nullopt;
  ir::Value* seq = batch_first ? u.node("Transpose", {x}, {S, B, I}, {{"perm", Ints{1, 0, 2}}}) : x;
  ir::Value* flat = u.reshape(seq, {S * B, I});
  // An initial state [D, B, H] (or [B, D, H]) of direction d as [B, H]; nullptr for the zero default.
  auto initial = [&](size_t input, int64_t d) -> ir::Value* {
    ir::Value* s = n->input(input);
    if (!s) return nullptr;
    return u.reshape(u.slice(s, batch_first ? 1 : 0, d, d + 1), {B, H});
  };

  // Masking by sequence length: the lengths as [B, 1] of the element type (run-time lengths only),
  // step k's 0/1 mask (k < length), and the rows (j' * B + b) with j' = (length_b - 1 - j) mod S that
  // a reverse direction reads at step j and writes at time j (past a length they are masked rows).
  ir::Value* lens_f = masked && !lens_c ? u.reshape(u.typed("Cast", {lens}, dt, {B}, {{"to", ir::dtype_to_onnx(dt)}}), {B, 1})
                                        : nullptr;
  auto mask = [&](int64_t k) -> ir::Value* {
    if (lens_c) {
      std::vector<float> m(static_cast<size_t>(B));
      for (int64_t b = 0; b < B; ++b) m[b] = k < (*lens_c)[b] ? 1.0f : 0.0f;
      return u.floats({B, 1}, m);
    }
    ir::Value* less = u.typed("Less", {u.scalar(float(k)), lens_f}, ir::DType::Bool, {B, 1});
    return u.typed("Cast", {less}, dt, {B, 1}, {{"to", ir::dtype_to_onnx(dt)}});
  };
  auto reverse_rows = [&](int64_t j) -> ir::Value* {
    if (lens_c) {
      Ints rows(static_cast<size_t>(B));
      for (int64_t b = 0; b < B; ++b) rows[b] = (((*lens_c)[b] - 1 - j + S) % S) * B + b;
      return u.ints(rows);
    }
    // In floats (exact for these small integers): l - 1 - j, plus S where negative, times B, plus b.
    std::vector<float> b_f(static_cast<size_t>(B));
    for (int64_t b = 0; b < B; ++b) b_f[b] = float(b);
    ir::Value* t = u.binary("Sub", lens_f, u.scalar(float(j + 1)));
    ir::Value* neg = u.typed("Cast", {u.typed("Less", {t, u.scalar(0.0f)}, ir::DType::Bool, {B, 1})}, dt, {B, 1},
                             {{"to", ir::dtype_to_onnx(dt)}});
    t = u.binary("Add", t, u.binary("Mul", neg, u.scalar(float(S))));
    t = u.binary("Add", u.binary("Mul", t, u.scalar(float(B))), u.floats({B, 1}, b_f));
    return u.typed("Cast", {u.reshape(t, {B})}, ir::DType::Int64, {B}, {{"to", ir::dtype_to_onnx(ir::DType::Int64)}});
  };
  // state <- mask * next + (1 - mask) * state; a zero state stays zero where masked.
  auto update = [&](ir::Value* state, ir::Value* next, ir::Value* m) -> ir::Value* {
    if (!m) return next;
    return state ? u.binary("Add", state, u.binary("Mul", u.binary("Sub", next, state), m)) : u.binary("Mul", next, m);
  };

  std::vector<std::vector<ir::Value*>> ys(static_cast<size_t>(D));
  std::vector<ir::Value*> last_h, last_c;
  for (int64_t d = 0; d < D; ++d) {
    const Activation* a = &acts[static_cast<size_t>(d) * defaults.size()];
    const bool reverse = d == 1 || direction == "reverse";
    // This direction's weights [rows, cols] from row `begin` on (as graph values, made once).
    auto matrix = [&](const Flat& m, int64_t cols, int64_t begin, int64_t count) {
      return u.value(u.part(m, (d * GH + begin) * cols, count * cols), {count, cols});
    };
    const Flat wb = u.part(bias, d * 2 * GH, GH), rb = u.part(bias, d * 2 * GH + GH, GH);
    // Both biases go into the input projection, except GRU's recurrent h-gate bias under linear_before_reset.
    const Flat in_bias = reset_after ? u.join(u.sum(u.part(wb, 0, 2 * H), u.part(rb, 0, 2 * H)), u.part(wb, 2 * H, H))
                                     : u.sum(wb, rb);
    ir::Value* proj = u.linear(flat, matrix(w, I, 0, GH), u.value(in_bias, {GH}));  // [S * B, G * H]
    ir::Value* r_all = kind == Kind::kGru ? nullptr : matrix(r, H, 0, GH);
    ir::Value* r_zr = kind == Kind::kGru ? matrix(r, H, 0, 2 * H) : nullptr;
    ir::Value* r_h = kind == Kind::kGru ? matrix(r, H, 2 * H, H) : nullptr;
    ir::Value* rb_h = reset_after ? u.value(u.part(rb, 2 * H, H), {H}) : nullptr;
    std::vector<ir::Value*> peeps;
    if (peep)
      for (int64_t k = 0; k < 3; ++k) peeps.push_back(u.value(u.part(*peep, (d * 3 + k) * H, H), {H}));
    ir::Value* h = initial(5, d);
    ir::Value* c = kind == Kind::kLstm ? initial(6, d) : nullptr;
    std::vector<ir::Value*> outs(static_cast<size_t>(S));  // per step, in processing order when masked
    for (int64_t step = 0; step < S; ++step) {
      const int64_t t = reverse ? S - 1 - step : step;
      ir::Value* m = masked ? mask(step) : nullptr;
      // [B, G * H]: the rows of time t, or under masking in reverse each entry's own time.
      ir::Value* xt = masked && reverse ? u.node("Gather", {proj, reverse_rows(step)}, {B, GH}, {{"axis", int64_t{0}}})
                                        : u.slice(proj, 0, t * B, (t + 1) * B);
      ir::Value* next_h = nullptr;
      if (kind == Kind::kGru) {
        // z, r from x and h; the candidate from x and r . (h R_h^T [+ Rb_h]) or (r . h) R_h^T.
        ir::Value* zr = u.slice(xt, 1, 0, 2 * H);
        if (h) zr = u.binary("Add", zr, u.linear(h, r_zr, nullptr));
        ir::Value* z = u.apply(a[0], u.clip(u.slice(zr, 1, 0, H), clip));
        ir::Value* rg = u.apply(a[0], u.clip(u.slice(zr, 1, H, 2 * H), clip));
        ir::Value* cand = u.slice(xt, 1, 2 * H, 3 * H);
        if (reset_after) {
          ir::Value* hr = h ? u.linear(h, r_h, rb_h) : rb_h;
          cand = u.binary("Add", cand, u.binary("Mul", rg, hr));
        } else if (h) {
          cand = u.binary("Add", cand, u.linear(u.binary("Mul", rg, h), r_h, nullptr));
        }
        ir::Value* ht = u.apply(a[1], u.clip(cand, clip));
        // H_t = (1 - z) . ht + z . H_{t-1} = ht + z . (H_{t-1} - ht)
        next_h = h ? u.binary("Add", ht, u.binary("Mul", z, u.binary("Sub", h, ht)))
                   : u.binary("Sub", ht, u.binary("Mul", z, ht));
      } else if (kind == Kind::kRnn) {
        ir::Value* pre = h ? u.binary("Add", xt, u.linear(h, r_all, nullptr)) : xt;
        next_h = u.apply(a[0], u.clip(pre, clip));
      } else {
        ir::Value* pre = h ? u.binary("Add", xt, u.linear(h, r_all, nullptr)) : xt;
        auto gate = [&](int64_t k) { return u.slice(pre, 1, k * H, (k + 1) * H); };  // i, o, f, c
        auto peephole = [&](ir::Value* v, int64_t k, ir::Value* cell) {
          if (peeps.empty() || !cell) return v;
          return u.binary("Add", v, u.binary("Mul", cell, peeps[static_cast<size_t>(k)]));
        };
        ir::Value* ig = u.apply(a[0], u.clip(peephole(gate(0), 0, c), clip));
        ir::Value* cand = u.apply(a[1], u.clip(gate(3), clip));
        ir::Value* next_c = u.binary("Mul", ig, cand);
        if (c) {
          ir::Value* fg = input_forget ? u.node("Sub", {u.scalar(1.0f), ig}, ig->shape().sizes())
                                       : u.apply(a[0], u.clip(peephole(gate(2), 2, c), clip));
          next_c = u.binary("Add", u.binary("Mul", fg, c), next_c);
        }
        ir::Value* og = u.apply(a[0], u.clip(peephole(gate(1), 1, next_c), clip));
        next_h = u.binary("Mul", og, u.apply(a[2], next_c));
        c = update(c, next_c, m);
      }
      h = update(h, next_h, m);
      outs[static_cast<size_t>(step)] = m ? u.binary("Mul", next_h, m) : h;  // Y is zero past a length
    }
    ys[d].resize(static_cast<size_t>(S));
    if (masked && reverse) {
      // Y at time t of entry b is its step (length_b - 1 - t) mod S: gathered from all steps' rows.
      std::vector<ir::Value*> parts;
      for (ir::Value* o : outs) parts.push_back(u.reshape(o, {1, B, H}));
      ir::Value* all = S == 1 ? parts[0] : u.node("Concat", parts, {S, B, H}, {{"axis", int64_t{0}}});
      ir::Value* rows = u.reshape(all, {S * B, H});
      for (int64_t t = 0; t < S; ++t)
        ys[d][static_cast<size_t>(t)] = u.node("Gather", {rows, reverse_rows(t)}, {B, H}, {{"axis", int64_t{0}}});
    } else {
      for (int64_t step = 0; step < S; ++step)
        ys[d][static_cast<size_t>(reverse ? S - 1 - step : step)] = outs[static_cast<size_t>(step)];
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
