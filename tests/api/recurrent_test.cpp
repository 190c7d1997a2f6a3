// LSTM, GRU and RNN unrolled over a static sequence (decompose-rnn): every attribute the spec gives
// them (directions, layouts, clip, input_forget, peepholes, linear_before_reset, initial states,
// activations with alpha/beta) compiles fully delegated and equals a direct evaluation of the spec's
// equations in double precision, on cpu and on Vulkan. What cannot be unrolled is refused with why.
#include <gtest/gtest.h>

#include <cmath>

#include "api_test_support.h"
#include "vkc/runtime/vulkan.h"

namespace vkc::test {
namespace {

struct Act {
  std::string name;
  double alpha = 0, beta = 0;
};

struct Case {
  std::string op;  // LSTM, GRU, RNN
  int64_t S, B, I, H;
  std::string direction = "forward";
  int64_t layout = 0;
  bool bias = false, initial = false, peepholes = false, seq_lens = false;
  float clip = 0;  // 0: none
  int64_t input_forget = 0, linear_before_reset = 0;
  std::vector<Act> acts = {};  // empty: the defaults; one direction's list is used for both
  const char* label;
  std::vector<int64_t> lens = {};  // sequence_lens per batch entry (a constant; seq_lens: all S)
  bool runtime_lens = false;       // sequence_lens as a graph input instead
  bool runtime_params = false;     // W, R, B and P as graph inputs instead of initializers
};

// Each batch entry's sequence length.
std::vector<int64_t> lengths(const Case& c) {
  return c.lens.empty() ? std::vector<int64_t>(static_cast<size_t>(c.B), c.S) : c.lens;
}

int64_t gates(const Case& c) { return c.op == "LSTM" ? 4 : c.op == "GRU" ? 3 : 1; }
int64_t dirs(const Case& c) { return c.direction == "bidirectional" ? 2 : 1; }

std::vector<Act> activations(const Case& c) {
  std::vector<Act> a = c.acts;
  if (a.empty())
    a = c.op == "LSTM" ? std::vector<Act>{{"Sigmoid"}, {"Tanh"}, {"Tanh"}}
        : c.op == "GRU" ? std::vector<Act>{{"Sigmoid"}, {"Tanh"}}
                        : std::vector<Act>{{"Tanh"}};
  if (dirs(c) == 2) {
    const std::vector<Act> one = a;
    a.insert(a.end(), one.begin(), one.end());
  }
  return a;
}

double apply(const Act& a, double x) {
  if (a.name == "Sigmoid") return 1 / (1 + std::exp(-x));
  if (a.name == "Tanh") return std::tanh(x);
  if (a.name == "Relu") return std::max(0.0, x);
  if (a.name == "HardSigmoid") return std::clamp(a.alpha * x + a.beta, 0.0, 1.0);
  if (a.name == "LeakyRelu") return x < 0 ? a.alpha * x : x;
  if (a.name == "Softsign") return x / (1 + std::abs(x));
  if (a.name == "Elu") return x < 0 ? a.alpha * (std::exp(x) - 1) : x;
  ADD_FAILURE() << a.name;
  return 0;
}

struct Inputs {
  std::vector<float> x, w, r, b, h0, c0, p;
};

// Y, Y_h (and Y_c for LSTM) by the spec's equations.
std::vector<std::vector<double>> reference(const Case& c, const Inputs& in) {
  const int64_t S = c.S, B = c.B, I = c.I, H = c.H, D = dirs(c), G = gates(c);
  const auto acts = activations(c);
  const size_t per = acts.size() / static_cast<size_t>(D);
  std::vector<double> y(static_cast<size_t>(S * D * B * H)), yh(static_cast<size_t>(D * B * H)), yc(yh.size());
  auto clip = [&](double v) { return c.clip > 0 ? std::clamp(v, -double(c.clip), double(c.clip)) : v; };
  for (int64_t d = 0; d < D; ++d) {
    const Act* a = &acts[static_cast<size_t>(d) * per];
    std::vector<double> h(static_cast<size_t>(B * H), 0.0), cell(h.size(), 0.0);
    for (int64_t i = 0; i < B * H; ++i) {  // initial states: [D, B, H] (layout 1: [B, D, H])
      const int64_t b = i / H, k = i % H;
      const int64_t at = c.layout ? (b * D + d) * H + k : (d * B + b) * H + k;
      if (c.initial) h[i] = in.h0[at], cell[i] = c.op == "LSTM" ? in.c0[at] : 0.0;
    }
    const std::vector<int64_t> len = lengths(c);
    for (int64_t step = 0; step < S; ++step) {
      std::vector<double> nh = h, nc = cell;  // entries past their length keep their state
      for (int64_t b = 0; b < B; ++b) {
        // An entry's steps stop at its length; reverse starts at its own last step.
        if (step >= len[b]) continue;
        const int64_t t = d == 1 || c.direction == "reverse" ? len[b] - 1 - step : step;
        // xw[g] = x_t W_g^T + Wb_g, hr[g] = h R_g^T + Rb_g for every gate row g
        std::vector<double> xw(static_cast<size_t>(G * H)), hr(xw.size());
        for (int64_t g = 0; g < G * H; ++g) {
          double sx = c.bias ? in.b[(d * 2 * G) * H + g] : 0, sh = c.bias ? in.b[(d * 2 * G + G) * H + g] : 0;
          for (int64_t i = 0; i < I; ++i)
            sx += in.x[c.layout ? (b * S + t) * I + i : (t * B + b) * I + i] * in.w[(d * G * H + g) * I + i];
          for (int64_t j = 0; j < H; ++j) sh += h[b * H + j] * in.r[(d * G * H + g) * H + j];
          xw[g] = sx, hr[g] = sh;
        }
        for (int64_t k = 0; k < H; ++k) {
          const int64_t bk = b * H + k;
          if (c.op == "LSTM") {  // gate order i, o, f, c; peepholes i, o, f
            auto pp = [&](int64_t which) { return c.peepholes ? in.p[(d * 3 + which) * H + k] : 0.0; };
            const double ig = apply(a[0], clip(xw[k] + hr[k] + pp(0) * cell[bk]));
            const double fg = c.input_forget ? 1 - ig : apply(a[0], clip(xw[2 * H + k] + hr[2 * H + k] + pp(2) * cell[bk]));
            const double cc = apply(a[1], clip(xw[3 * H + k] + hr[3 * H + k]));
            nc[bk] = fg * cell[bk] + ig * cc;
            const double og = apply(a[0], clip(xw[H + k] + hr[H + k] + pp(1) * nc[bk]));
            nh[bk] = og * apply(a[2], nc[bk]);
          } else if (c.op == "GRU") {  // gate order z, r, h
            const double z = apply(a[0], clip(xw[k] + hr[k]));
            const double r = apply(a[0], clip(xw[H + k] + hr[H + k]));
            double cand = xw[2 * H + k];
            if (c.linear_before_reset) {
              cand += r * hr[2 * H + k];
            } else {
              double s = c.bias ? in.b[(d * 2 * G + G) * H + 2 * H + k] : 0;
              for (int64_t j = 0; j < H; ++j) {
                const double rj = apply(a[0], clip(xw[H + j] + hr[H + j]));
                s += rj * h[b * H + j] * in.r[(d * G * H + 2 * H + k) * H + j];
              }
              cand += s;
            }
            const double hh = apply(a[1], clip(cand));
            nh[bk] = (1 - z) * hh + z * h[bk];
          } else {
            nh[bk] = apply(a[0], clip(xw[k] + hr[k]));
          }
        }
        for (int64_t k = 0; k < H; ++k)  // Y past an entry's length stays zero
          y[c.layout ? ((b * S + t) * D + d) * H + k : ((t * D + d) * B + b) * H + k] = nh[b * H + k];
      }
      h = nh, cell = nc;
    }
    for (int64_t i = 0; i < B * H; ++i) {
      const int64_t b = i / H, k = i % H;
      const int64_t at = c.layout ? (b * D + d) * H + k : (d * B + b) * H + k;
      yh[at] = h[i], yc[at] = cell[i];
    }
  }
  if (c.op == "LSTM") return {y, yh, yc};
  return {y, yh};
}

void attr_strings(onnx::NodeProto* n, const std::string& name, const std::vector<std::string>& v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto_AttributeType_STRINGS);
  for (const auto& s : v) a->add_strings(s);
}

// The model: X (and initial states) as inputs, weights as initializers, or inputs too
// (runtime_params), in the order inputs_of() gives them. `lens_override` replaces the lengths.
std::vector<uint8_t> model(const Case& c, const Inputs& in, std::vector<int64_t> lens_override = {}) {
  const int64_t S = c.S, B = c.B, I = c.I, H = c.H, D = dirs(c), G = gates(c);
  ModelBuilder b(8, 14);
  b.input("X", kF32, c.layout ? std::vector<DimSpec>{B, S, I} : std::vector<DimSpec>{S, B, I});
  const std::vector<DimSpec> state = c.layout ? std::vector<DimSpec>{B, D, H} : std::vector<DimSpec>{D, B, H};
  auto param = [&](const char* name, std::vector<DimSpec> dims, const std::vector<float>& v) {
    std::vector<int64_t> shape;
    for (const DimSpec& d : dims) shape.push_back(std::get<int64_t>(d));
    if (c.runtime_params) b.input(name, kF32, dims);
    else b.raw_floats(name, shape, v);
  };
  param("W", {D, G * H, I}, in.w);
  param("R", {D, G * H, H}, in.r);
  std::vector<std::string> ins = {"X", "W", "R", "", "", "", "", ""};
  if (c.bias) param("B", {D, 2 * G * H}, in.b), ins[3] = "B";
  if (c.seq_lens || !c.lens.empty() || c.runtime_lens || !lens_override.empty()) {
    if (c.runtime_lens) {
      b.input("lens", onnx::TensorProto_DataType_INT32, {B});
    } else {
      const std::vector<int64_t> len = lens_override.empty() ? lengths(c) : lens_override;
      auto* t = b.initializer("lens", onnx::TensorProto_DataType_INT32, {B});
      for (int64_t l : len) t->add_int32_data(static_cast<int32_t>(l));
    }
    ins[4] = "lens";
  }
  if (c.peepholes) param("P", {D, 3 * H}, in.p), ins[7] = "P";
  if (c.initial) {
    b.input("h0", kF32, state), ins[5] = "h0";
    if (c.op == "LSTM") b.input("c0", kF32, state), ins[6] = "c0";
  }
  while (ins.back().empty()) ins.pop_back();
  std::vector<std::string> outs = {"Y", "Y_h"};
  if (c.op == "LSTM") outs.push_back("Y_c");
  b.output("Y", kF32, c.layout ? std::vector<DimSpec>{B, S, D, H} : std::vector<DimSpec>{S, D, B, H});
  b.output("Y_h", kF32, state);
  if (c.op == "LSTM") b.output("Y_c", kF32, state);
  auto* n = b.node(c.op, ins, outs, "rnn");
  attr_int(n, "hidden_size", H);
  attr_string(n, "direction", c.direction);
  if (c.layout) attr_int(n, "layout", 1);
  if (c.clip > 0) attr_float(n, "clip", c.clip);
  if (c.input_forget) attr_int(n, "input_forget", 1);
  if (c.linear_before_reset) attr_int(n, "linear_before_reset", 1);
  if (!c.acts.empty()) {
    std::vector<std::string> names;
    std::vector<float> alphas, betas;
    for (const Act& a : c.acts) {
      names.push_back(a.name);
      if (a.name == "HardSigmoid" || a.name == "LeakyRelu" || a.name == "Elu") alphas.push_back(float(a.alpha));
      if (a.name == "HardSigmoid") betas.push_back(float(a.beta));
    }
    attr_strings(n, "activations", names);
    if (!alphas.empty()) attr_floats(n, "activation_alpha", alphas);
    if (!betas.empty()) attr_floats(n, "activation_beta", betas);
  }
  return b.bytes();
}

Inputs inputs(const Case& c) {
  const auto D = static_cast<size_t>(dirs(c)), G = static_cast<size_t>(gates(c)), H = static_cast<size_t>(c.H);
  const auto S = static_cast<size_t>(c.S), B = static_cast<size_t>(c.B), I = static_cast<size_t>(c.I);
  auto scaled = [](std::vector<float> v, float s) {
    for (float& x : v) x *= s;
    return v;
  };
  return {normal_floats(S * B * I, 1),          scaled(normal_floats(D * G * H * I, 2), 0.5f),
          scaled(normal_floats(D * G * H * H, 3), 0.5f), scaled(normal_floats(D * 2 * G * H, 4), 0.5f),
          normal_floats(D * B * H, 5),          normal_floats(D * B * H, 6),
          scaled(normal_floats(D * 3 * H, 7), 0.5f)};
}

const std::vector<Case> kCases = {
    {.op = "LSTM", .S = 4, .B = 2, .I = 3, .H = 5, .bias = true, .initial = true, .peepholes = true, .clip = 1.5f,
     .label = "lstm forward, bias, states, peepholes, clip"},
    {.op = "LSTM", .S = 3, .B = 2, .I = 4, .H = 3, .direction = "bidirectional", .layout = 1, .bias = true,
     .input_forget = 1, .label = "lstm bidirectional, layout 1, input_forget"},
    {.op = "LSTM", .S = 1, .B = 1, .I = 6, .H = 4, .direction = "reverse", .initial = true, .seq_lens = true,
     .acts = {{"HardSigmoid", 0.3, 0.6}, {"Softsign"}, {"Elu", 0.7}}, .label = "lstm one step, reverse, activations"},
    {.op = "GRU", .S = 4, .B = 2, .I = 3, .H = 5, .direction = "reverse", .bias = true, .initial = true,
     .linear_before_reset = 1, .label = "gru reverse, linear_before_reset"},
    {.op = "GRU", .S = 3, .B = 1, .I = 2, .H = 4, .direction = "bidirectional", .bias = true, .initial = true,
     .acts = {{"HardSigmoid", 0.25, 0.55}, {"LeakyRelu", 0.1}}, .label = "gru bidirectional, activations"},
    {.op = "GRU", .S = 2, .B = 3, .I = 3, .H = 3, .layout = 1, .label = "gru layout 1, zero states"},
    {.op = "RNN", .S = 5, .B = 2, .I = 3, .H = 4, .layout = 1, .bias = true, .initial = true, .seq_lens = true,
     .acts = {{"Relu"}}, .label = "rnn relu, layout 1, sequence_lens"},
    {.op = "RNN", .S = 3, .B = 1, .I = 2, .H = 3, .direction = "bidirectional", .clip = 0.8f,
     .label = "rnn bidirectional, clip"},
    // Weights as graph inputs (sliced at run time), and lengths that differ between batch entries.
    {.op = "LSTM", .S = 3, .B = 2, .I = 3, .H = 4, .direction = "bidirectional", .bias = true, .initial = true,
     .peepholes = true, .label = "lstm bidirectional, W/R/B/P as inputs", .runtime_params = true},
    {.op = "GRU", .S = 3, .B = 2, .I = 2, .H = 3, .bias = true, .linear_before_reset = 1,
     .label = "gru, W/R/B as inputs, linear_before_reset", .runtime_params = true},
    {.op = "LSTM", .S = 4, .B = 3, .I = 3, .H = 4, .direction = "bidirectional", .bias = true, .initial = true,
     .label = "lstm bidirectional, uneven constant lengths", .lens = {4, 2, 0}},
    {.op = "GRU", .S = 4, .B = 3, .I = 2, .H = 3, .direction = "reverse", .layout = 1, .bias = true,
     .label = "gru reverse, layout 1, uneven constant lengths", .lens = {1, 4, 3}},
    {.op = "RNN", .S = 4, .B = 3, .I = 3, .H = 4, .direction = "bidirectional", .bias = true, .initial = true,
     .label = "rnn bidirectional, lengths as an input", .lens = {3, 4, 1}, .runtime_lens = true},
    {.op = "LSTM", .S = 3, .B = 2, .I = 2, .H = 3, .direction = "reverse", .initial = true,
     .label = "lstm reverse, lengths and weights as inputs", .lens = {2, 3}, .runtime_lens = true,
     .runtime_params = true},
};

// The run's inputs, in the model's input order.
std::vector<Tensor> inputs_of(const Case& c, const Inputs& in) {
  const int64_t D = dirs(c), G = gates(c);
  std::vector<Tensor> ins = {Tensor::of(ir::DType::Float32, c.layout ? std::vector<int64_t>{c.B, c.S, c.I}
                                                                      : std::vector<int64_t>{c.S, c.B, c.I},
                                        in.x)};
  if (c.runtime_params) {
    ins.push_back(Tensor::of(ir::DType::Float32, {D, G * c.H, c.I}, in.w));
    ins.push_back(Tensor::of(ir::DType::Float32, {D, G * c.H, c.H}, in.r));
    if (c.bias) ins.push_back(Tensor::of(ir::DType::Float32, {D, 2 * G * c.H}, in.b));
  }
  if (c.runtime_lens) {
    std::vector<int32_t> len;
    for (int64_t l : lengths(c)) len.push_back(static_cast<int32_t>(l));
    ins.push_back(Tensor::of(ir::DType::Int32, {c.B}, len));
  }
  if (c.runtime_params && c.peepholes) ins.push_back(Tensor::of(ir::DType::Float32, {D, 3 * c.H}, in.p));
  const std::vector<int64_t> state = c.layout ? std::vector<int64_t>{c.B, D, c.H} : std::vector<int64_t>{D, c.B, c.H};
  if (c.initial) {
    ins.push_back(Tensor::of(ir::DType::Float32, state, in.h0));
    if (c.op == "LSTM") ins.push_back(Tensor::of(ir::DType::Float32, state, in.c0));
  }
  return ins;
}

TEST(Recurrent, UnrolledFullyDelegatedAndMatchTheSpecEquations) {
  std::vector<std::string> backends = {"cpu"};
  if (!runtime::vulkan_device_name().empty()) backends.push_back("vulkan");
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.label);
    const Inputs in = inputs(c);
    const CompileResult r = compile(model(c, in), fs::path(), CompileOptions{});
    ASSERT_TRUE(r) << r.error();
    EXPECT_EQ(r.partition.rejected, 0u);
    for (const auto& n : r.partition.nodes) EXPECT_NE(n.op, c.op) << "not unrolled: " << n.reason;
    const std::vector<Tensor> ins = inputs_of(c, in);
    const auto want = reference(c, in);
    for (const std::string& backend : backends) {
      RunOptions o;
      o.backend = backend;
      const RunResult out = vkc::run(r.pte, ins, o);
      ASSERT_TRUE(out) << backend << ": " << describe(out.diagnostics);
      ASSERT_EQ(out.outputs.size(), want.size()) << backend;
      for (size_t k = 0; k < want.size(); ++k)
        for (size_t i = 0; i < want[k].size(); ++i)
          ASSERT_NEAR(out.outputs[k].get_f(static_cast<int64_t>(i)), want[k][i], 2e-5)
              << backend << " output " << k << " element " << i;
    }
  }
}

TEST(Recurrent, WhatCannotBeUnrolledIsRefusedWithTheReason) {
  const Case& c = kCases[6];
  const CompileResult too_long = compile(model(c, inputs(c), {c.S + 1, c.S}), fs::path(), CompileOptions{});
  ASSERT_FALSE(too_long);
  EXPECT_NE(too_long.error().find("a sequence length lies outside 0..5"), std::string::npos) << too_long.error();
}

}  // namespace
}  // namespace vkc::test
