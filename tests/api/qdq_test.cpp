// Pre-quantized QDQ models (QuantizeLinear/DequantizeLinear as onnxruntime's quantize_static writes
// them) compile fully delegated and compute what the integer reference computes: activations
// quantized to uint8, int32 accumulation, int8 weights per channel, int32 biases. The expected values
// are computed here in integer arithmetic, independently of vkc's kernels.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <map>
#include <random>

#include "api_test_support.h"
#include "vkc/runtime/vulkan.h"

namespace vkc::test {
namespace {

constexpr int32_t kU8 = onnx::TensorProto_DataType_UINT8;
constexpr int32_t kI8 = onnx::TensorProto_DataType_INT8;
constexpr int32_t kI32 = onnx::TensorProto_DataType_INT32;

int64_t quantize(double x, double s, int64_t z, int64_t lo, int64_t hi) {
  return std::clamp<int64_t>(static_cast<int64_t>(std::nearbyint(static_cast<float>(x) / static_cast<float>(s))) + z,
                             lo, hi);
}

struct QdqBuilder {
  ModelBuilder b{8, 13};
  std::mt19937 rng{11};
  int counter = 0;
  std::string fresh(const std::string& base) { return base + std::to_string(counter++); }

  std::string scalar(float v) {
    const std::string id = fresh("s");
    b.raw_floats(id, {}, {v});
    return id;
  }
  std::string zero_point(int32_t type, int64_t v) {
    const std::string id = fresh("z");
    auto* t = b.initializer(id, type, {});
    t->add_int32_data(static_cast<int32_t>(v));
    return id;
  }
  // x -> QuantizeLinear(s, z uint8) -> DequantizeLinear
  std::string qdq(const std::string& x, float s, int64_t z) {
    const std::string sc = scalar(s), zp = zero_point(kU8, z), q = fresh("q"), d = fresh("dq");
    b.node("QuantizeLinear", {x, sc, zp}, {q}, q);
    b.node("DequantizeLinear", {q, sc, zp}, {d}, d);
    return d;
  }
  // A constant int tensor and its DequantizeLinear with per-axis scales (zero points `zps` when given).
  std::string dq_const(int32_t type, const std::vector<int64_t>& dims, const std::vector<int32_t>& q,
                       const std::vector<float>& scales, int64_t axis, const std::vector<int32_t>& zps = {}) {
    const std::string w = fresh("wq"), s = fresh("ws"), d = fresh("wdq");
    auto* t = b.initializer(w, type, dims);
    for (int32_t v : q) t->add_int32_data(v);
    b.raw_floats(s, {int64_t(scales.size())}, scales);
    std::vector<std::string> ins = {w, s};
    if (!zps.empty()) {
      const std::string z = fresh("wz");
      auto* zt = b.initializer(z, type, {int64_t(zps.size())});
      for (int32_t v : zps) zt->add_int32_data(v);
      ins.push_back(z);
    }
    attr_int(b.node("DequantizeLinear", ins, {d}, d), "axis", axis);
    return d;
  }
  std::vector<int32_t> random_q(size_t n, int lo, int hi) {
    std::uniform_int_distribution<int> d(lo, hi);
    std::vector<int32_t> v(n);
    for (auto& x : v) x = d(rng);
    return v;
  }
  std::vector<uint8_t> bytes() const { return b.bytes(); }
};

std::vector<float> random_input(size_t n, uint32_t seed) { return normal_floats(n, seed); }

// The int32 accumulators of a 3x3 convolution (pads 1) of x [1, 2, 5, 5] quantized by (sx, zx)
// with int8 weights w [3, 2, 3, 3] and int32 bias [3]: QLinear semantics, [3 * 25].
std::vector<int64_t> int_conv3x3(const std::vector<float>& x, float sx, int64_t zx, const std::vector<int32_t>& w,
                                 const std::vector<int32_t>& bias) {
  std::vector<int64_t> acc(75);
  for (int64_t o = 0; o < 3; ++o)
    for (int64_t i = 0; i < 5; ++i)
      for (int64_t j = 0; j < 5; ++j) {
        int64_t a = bias[o];
        for (int64_t c = 0; c < 2; ++c)
          for (int64_t di = 0; di < 3; ++di)
            for (int64_t dj = 0; dj < 3; ++dj) {
              const int64_t yy = i + di - 1, xx = j + dj - 1;
              if (yy < 0 || yy >= 5 || xx < 0 || xx >= 5) continue;
              a += (quantize(x[c * 25 + yy * 5 + xx], sx, zx, 0, 255) - zx) * w[((o * 2 + c) * 3 + di) * 3 + dj];
            }
        acc[o * 25 + i * 5 + j] = a;
      }
  return acc;
}


std::vector<float> run(const std::vector<uint8_t>& pte, const std::vector<float>& x, const std::vector<int64_t>& shape,
                       const char* backend = "cpu") {
  RunOptions o;
  o.backend = backend;
  const RunResult r = vkc::run(pte, {Tensor::of(ir::DType::Float32, shape, x)}, o);
  EXPECT_TRUE(r) << describe(r.diagnostics);
  if (!r) return {};
  std::vector<float> out(r.outputs.at(0).numel());
  for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<float>(r.outputs[0].get_f(static_cast<int64_t>(i)));
  return out;
}

// x [2, 16] -QDQ u8-> MatMul(int8 W1 [16, 8] per column) -QDQ u8-> Gemm(int8 W2 [4, 8] transB, per row,
// int32 bias) -> y [2, 4]
struct LinearModel {
  static constexpr int64_t M = 2, K = 16, H = 8, N = 4;
  const float sx = 0.03f, sh = 0.05f;
  const int64_t zx = 128, zh = 120;
  std::vector<int32_t> w1, w2, bias;
  std::vector<float> s1, s2;
  std::vector<uint8_t> bytes;

  explicit LinearModel(std::vector<int32_t> w1_zero_points = {}) {
    QdqBuilder m;
    m.b.input("x", kF32, {M, K});
    m.b.output("y", kF32, {M, N});
    w1 = m.random_q(K * H, -127, 127);
    w2 = m.random_q(N * H, -127, 127);
    bias = m.random_q(N, -2000, 2000);
    for (int64_t i = 0; i < H; ++i) s1.push_back(0.002f + 0.0005f * float(i));
    for (int64_t i = 0; i < N; ++i) s2.push_back(0.004f + 0.001f * float(i));
    std::vector<float> sb;
    for (float s : s2) sb.push_back(sh * s);
    const std::string x = m.qdq("x", sx, zx);
    const std::string h = m.b.node("MatMul", {x, m.dq_const(kI8, {K, H}, w1, s1, 1, w1_zero_points)}, {"h"}, "mm")
                              ->output(0);
    const std::string hq = m.qdq(h, sh, zh);
    auto* gemm = m.b.node("Gemm", {hq, m.dq_const(kI8, {N, H}, w2, s2, 0), m.dq_const(kI32, {N}, bias, sb, 0)},
                          {"y"}, "gemm");
    attr_int(gemm, "transB", 1);
    zp1 = std::move(w1_zero_points);
    bytes = m.bytes();
  }
  std::vector<int32_t> zp1;

  // The integer reference: onnxruntime's QLinear semantics.
  std::vector<float> expected(const std::vector<float>& xin) const {
    std::vector<float> y(M * N);
    for (int64_t r = 0; r < M; ++r) {
      std::vector<int64_t> hq(H);
      for (int64_t c = 0; c < H; ++c) {
        int64_t acc = 0;
        for (int64_t k = 0; k < K; ++k)
          acc += (quantize(xin[r * K + k], sx, zx, 0, 255) - zx) * (w1[k * H + c] - (zp1.empty() ? 0 : zp1[c]));
        hq[c] = quantize(static_cast<float>(acc) * (sx * s1[c]), sh, zh, 0, 255);
      }
      for (int64_t n = 0; n < N; ++n) {
        int64_t acc = 0;
        for (int64_t c = 0; c < H; ++c) acc += (hq[c] - zh) * w2[n * H + c];
        y[r * N + n] = static_cast<float>(acc + bias[n]) * (sh * s2[n]);
      }
    }
    return y;
  }
};

double max_diff(const std::vector<float>& a, const std::vector<float>& b) {
  EXPECT_EQ(a.size(), b.size());
  double m = 0;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) m = std::max(m, double(std::abs(a[i] - b[i])));
  return m;
}

// The program's output for x [1, 2, 5, 5] within 1e-5 of `want` on cpu, and on Vulkan when there is a device.
void expect_conv_output(const std::vector<uint8_t>& pte, const std::vector<float>& x, const std::vector<float>& want) {
  EXPECT_LT(max_diff(run(pte, x, {1, 2, 5, 5}), want), 1e-5);
  if (runtime::vulkan_device_name().empty()) GTEST_SKIP() << "no Vulkan device";
  EXPECT_LT(max_diff(run(pte, x, {1, 2, 5, 5}, "vulkan"), want), 1e-5);
}

TEST(Qdq, Int8LinearsKeepTheirWeightsAndMatchTheIntegerReference) {
  const LinearModel model;
  const CompileResult r = compile(model.bytes, fs::path(), CompileOptions{});
  ASSERT_TRUE(r) << r.error();
  EXPECT_EQ(r.partition.rejected, 0u);
  const InspectResult report = inspect(r.pte);
  ASSERT_TRUE(report);
  const auto& d = report.report.delegates.at(0);
  // The MatMul between two QDQs runs on int8 activations (q8ta_linear); the Gemm, whose output is
  // not quantized, on the int8-weight linear after a dequantize.
  EXPECT_EQ(d.ops.count("et_vk.q8ta_linear.default"), 1u);
  EXPECT_EQ(d.ops.count("aten._weight_int8pack_mm.default") ? d.ops.at("aten._weight_int8pack_mm.default") : 0, 1u);
  EXPECT_EQ(d.ops.count("aten.linear.default"), 0u);
  EXPECT_EQ(d.ops.count("aten.round.default"), 0u);
  // The weights stay int8 (16*8 + 4*8 bytes), not f32.
  EXPECT_LT(d.constant_bytes, (LinearModel::K * LinearModel::H + LinearModel::N * LinearModel::H) * 4u);
  for (uint32_t seed : {1u, 2u, 3u}) {
    const auto x = random_input(LinearModel::M * LinearModel::K, seed);
    const auto want = model.expected(x);
    EXPECT_LT(max_diff(run(r.pte, x, {LinearModel::M, LinearModel::K}), want), 1e-5) << seed;
    if (!runtime::vulkan_device_name().empty()) {  // linear_quantized.glsl's int8 variant
      EXPECT_LT(max_diff(run(r.pte, x, {LinearModel::M, LinearModel::K}, "vulkan"), want), 1e-5) << seed;
    }
  }
}

TEST(Qdq, ZeroPointedWeightsAreDequantizedExactly) {
  // The int8 linear has no zero points: such weights become f32 constants, still exact.
  const LinearModel model({1, -2, 3, 0, 5, -6, 7, 8});
  const CompileResult r = compile(model.bytes, fs::path(), CompileOptions{});
  ASSERT_TRUE(r) << r.error();
  const InspectResult report = inspect(r.pte);
  const auto& d = report.report.delegates.at(0);
  EXPECT_EQ(d.ops.count("aten.linear.default"), 1u);
  EXPECT_EQ(d.ops.at("aten._weight_int8pack_mm.default"), 1u);
  const auto x = random_input(LinearModel::M * LinearModel::K, 9);
  EXPECT_LT(max_diff(run(r.pte, x, {LinearModel::M, LinearModel::K}), model.expected(x)), 1e-5);
  // --quant-report says why the MatMul stayed off the int8 activations.
  EXPECT_NE(r.quant_report.find("not on int8 activations: its weight is not int8 without zero points"),
            std::string::npos)
      << r.quant_report;
}

// x [1, 2, 5, 5] -QDQ u8-> Conv(int8 W [3, 2, 3, 3] per output channel, int32 bias, pads 1) -> y [1, 3, 5, 5]
TEST(Qdq, ConvWeightsAreDequantizedAndActivationsFakeQuantizedOnBothBackends) {
  QdqBuilder m;
  const float sx = 0.02f;
  const int64_t zx = 100;
  m.b.input("x", kF32, {1, 2, 5, 5});
  m.b.output("y", kF32, {1, 3, 5, 5});
  const auto w = m.random_q(3 * 2 * 9, -127, 127), bias = m.random_q(3, -500, 500);
  const std::vector<float> sw = {0.01f, 0.02f, 0.015f};
  std::vector<float> sb;
  for (float s : sw) sb.push_back(sx * s);
  auto* conv = m.b.node("Conv", {m.qdq("x", sx, zx), m.dq_const(kI8, {3, 2, 3, 3}, w, sw, 0), m.dq_const(kI32, {3}, bias, sb, 0)},
                        {"y"}, "conv");
  attr_ints(conv, "pads", {1, 1, 1, 1});
  const CompileResult r = compile(m.bytes(), fs::path(), CompileOptions{});
  ASSERT_TRUE(r) << r.error();
  EXPECT_EQ(r.partition.rejected, 0u);
  const auto x = random_input(50, 5);
  const auto acc = int_conv3x3(x, sx, zx, w, bias);
  std::vector<float> want(75);
  for (size_t k = 0; k < want.size(); ++k) want[k] = static_cast<float>(acc[k]) * (sx * sw[k / 25]);
  expect_conv_output(r.pte, x, want);
}

// onnxruntime's quantize_dynamic: DynamicQuantizeLinear -> MatMulInteger / ConvInteger -> Cast -> Mul(xs * ws).
struct DynamicModel {
  std::vector<int32_t> w;
  std::vector<float> ws;
  int64_t wzp = 0;
  std::vector<uint8_t> bytes;

  // conv: x [1, 2, 5, 5], uint8 W [3, 2, 3, 3] with zero point 5, one scale. Else x [2, 16], int8 W [16, 8]
  // symmetric with per-column scales.
  explicit DynamicModel(bool conv) {
    QdqBuilder m;
    m.b.input("x", kF32, conv ? std::vector<DimSpec>{1, 2, 5, 5} : std::vector<DimSpec>{2, 16});
    m.b.output("y", kF32, conv ? std::vector<DimSpec>{1, 3, 5, 5} : std::vector<DimSpec>{2, 8});
    m.b.node("DynamicQuantizeLinear", {"x"}, {"xq", "xs", "xzp"}, "dql");
    std::string wname = m.fresh("w"), zname = m.fresh("wz"), sname = m.fresh("ws");
    if (conv) {
      w = m.random_q(3 * 2 * 9, 0, 255);
      ws = {0.02f};
      wzp = 5;
      auto* t = m.b.initializer(wname, kU8, {3, 2, 3, 3});
      for (int32_t v : w) t->add_int32_data(v);
      m.b.initializer(zname, kU8, {})->add_int32_data(5);
      m.b.raw_floats(sname, {}, ws);
      attr_ints(m.b.node("ConvInteger", {"xq", wname, "xzp", zname}, {"yi"}, "convi"), "pads", {1, 1, 1, 1});
    } else {
      w = m.random_q(16 * 8, -127, 127);
      for (int i = 0; i < 8; ++i) ws.push_back(0.003f + 0.001f * float(i));
      auto* t = m.b.initializer(wname, kI8, {16, 8});
      for (int32_t v : w) t->add_int32_data(v);
      auto* z = m.b.initializer(zname, kI8, {8});
      for (int i = 0; i < 8; ++i) z->add_int32_data(0);
      m.b.raw_floats(sname, {8}, ws);
      m.b.node("MatMulInteger", {"xq", wname, "xzp", zname}, {"yi"}, "mmi");
    }
    attr_int(m.b.node("Cast", {"yi"}, {"yf"}, "cast"), "to", kF32);
    m.b.node("Mul", {"xs", sname}, {"scale"}, "scales_mul");
    m.b.node("Mul", {"yf", "scale"}, {"y"}, "out");
    bytes = m.bytes();
  }

  // DynamicQuantizeLinear as the ONNX spec defines it, then integer products.
  static std::pair<std::vector<int64_t>, std::pair<float, int64_t>> quantize_input(const std::vector<float>& x) {
    float lo = 0.f, hi = 0.f;
    for (float v : x) lo = std::min(lo, v), hi = std::max(hi, v);
    const float scale = (hi - lo) / 255.f;
    const int64_t zp = std::clamp<int64_t>(static_cast<int64_t>(std::nearbyint(-lo / scale)), 0, 255);
    std::vector<int64_t> q;
    for (float v : x) q.push_back(quantize(v, scale, zp, 0, 255));
    return {q, {scale, zp}};
  }
};

TEST(Qdq, DynamicQuantizedMatMulIntegerMatchesTheIntegerReference) {
  const DynamicModel model(false);
  const CompileResult r = compile(model.bytes, fs::path(), CompileOptions{});
  ASSERT_TRUE(r) << r.error();
  EXPECT_EQ(r.partition.rejected, 0u);
  const InspectResult report = inspect(r.pte);
  EXPECT_EQ(report.report.delegates.at(0).ops.count("aten._weight_int8pack_mm.default"), 1u);  // int8 kept
  const auto x = random_input(32, 21);
  const auto [q, params] = DynamicModel::quantize_input(x);
  std::vector<float> want(16);
  double scale = 0;
  for (int64_t r2 = 0; r2 < 2; ++r2)
    for (int64_t n = 0; n < 8; ++n) {
      int64_t acc = 0;
      for (int64_t k = 0; k < 16; ++k) acc += (q[r2 * 16 + k] - params.second) * model.w[k * 8 + n];
      want[r2 * 8 + n] = static_cast<float>(acc) * (params.first * model.ws[n]);
      scale = std::max(scale, double(std::abs(want[r2 * 8 + n])));
    }
  EXPECT_LT(max_diff(run(r.pte, x, {2, 16}), want), 1e-5 * scale);
}

TEST(Qdq, DynamicQuantizedConvIntegerMatchesTheIntegerReference) {
  const DynamicModel model(true);
  const CompileResult r = compile(model.bytes, fs::path(), CompileOptions{});
  ASSERT_TRUE(r) << r.error();
  EXPECT_EQ(r.partition.rejected, 0u);
  const auto x = random_input(50, 22);
  const auto [q, params] = DynamicModel::quantize_input(x);
  std::vector<float> want(75);
  double scale = 0;
  for (int64_t o = 0; o < 3; ++o)
    for (int64_t i = 0; i < 5; ++i)
      for (int64_t j = 0; j < 5; ++j) {
        int64_t acc = 0;
        for (int64_t c = 0; c < 2; ++c)
          for (int64_t di = 0; di < 3; ++di)
            for (int64_t dj = 0; dj < 3; ++dj) {
              const int64_t y = i + di - 1, xc = j + dj - 1;
              if (y < 0 || y >= 5 || xc < 0 || xc >= 5) continue;
              acc += (q[c * 25 + y * 5 + xc] - params.second) * (model.w[((o * 2 + c) * 3 + di) * 3 + dj] - model.wzp);
            }
        want[o * 25 + i * 5 + j] = static_cast<float>(acc) * (params.first * model.ws[0]);
        scale = std::max(scale, double(std::abs(want[o * 25 + i * 5 + j])));
      }
  EXPECT_LT(max_diff(run(r.pte, x, {1, 2, 5, 5}), want), 1e-5 * scale);
  if (runtime::vulkan_device_name().empty()) GTEST_SKIP() << "no Vulkan device";
  EXPECT_LT(max_diff(run(r.pte, x, {1, 2, 5, 5}, "vulkan"), want), 1e-5 * scale);
}

// QOperator format: x -> QuantizeLinear -> QLinearMatMul (per-column int8 weights) -> DequantizeLinear.
TEST(Qdq, QLinearMatMulMatchesTheIntegerReference) {
  QdqBuilder m;
  const float sx = 0.03f, sy = 0.05f;
  const int64_t zx = 128, zy = 120;
  m.b.input("x", kF32, {2, 16});
  m.b.output("y", kF32, {2, 8});
  const auto w = m.random_q(16 * 8, -127, 127);
  std::vector<float> sw;
  for (int i = 0; i < 8; ++i) sw.push_back(0.002f + 0.0005f * float(i));
  const std::string xs = m.scalar(sx), xz = m.zero_point(kU8, zx), ys = m.scalar(sy), yz = m.zero_point(kU8, zy);
  const std::string wq = m.fresh("wq"), ws = m.fresh("ws"), wz = m.fresh("wz");
  auto* t = m.b.initializer(wq, kI8, {16, 8});
  for (int32_t v : w) t->add_int32_data(v);
  m.b.raw_floats(ws, {8}, sw);
  auto* zt = m.b.initializer(wz, kI8, {8});
  for (int i = 0; i < 8; ++i) zt->add_int32_data(0);
  m.b.node("QuantizeLinear", {"x", xs, xz}, {"xq"}, "q");
  m.b.node("QLinearMatMul", {"xq", xs, xz, wq, ws, wz, ys, yz}, {"yq"}, "qmm");
  m.b.node("DequantizeLinear", {"yq", ys, yz}, {"y"}, "dq");
  const CompileResult r = compile(m.bytes(), fs::path(), CompileOptions{});
  ASSERT_TRUE(r) << r.error();
  EXPECT_EQ(r.partition.rejected, 0u);
  const InspectResult report = inspect(r.pte);
  EXPECT_EQ(report.report.delegates.at(0).ops.count("et_vk.q8ta_linear.default"), 1u);
  const auto x = random_input(32, 13);
  std::vector<float> want(16);
  for (int64_t row = 0; row < 2; ++row)
    for (int64_t n = 0; n < 8; ++n) {
      int64_t acc = 0;
      for (int64_t k = 0; k < 16; ++k) acc += (quantize(x[row * 16 + k], sx, zx, 0, 255) - zx) * w[k * 8 + n];
      want[row * 8 + n] = static_cast<float>(quantize(static_cast<float>(acc) * (sx * sw[n]), sy, zy, 0, 255) - zy) * sy;
    }
  EXPECT_LT(max_diff(run(r.pte, x, {2, 16}), want), 1e-5);
}

// QOperator format: x -> QuantizeLinear -> QLinearConv (per-channel int8 weights, int32 bias, pads 1)
// -> DequantizeLinear, on both backends.
TEST(Qdq, QLinearConvMatchesTheIntegerReference) {
  QdqBuilder m;
  const float sx = 0.02f, sy = 0.04f;
  const int64_t zx = 100, zy = 128;
  m.b.input("x", kF32, {1, 2, 5, 5});
  m.b.output("y", kF32, {1, 3, 5, 5});
  const auto w = m.random_q(3 * 2 * 9, -127, 127), bias = m.random_q(3, -500, 500);
  const std::vector<float> sw = {0.01f, 0.02f, 0.015f};
  const std::string xs = m.scalar(sx), xz = m.zero_point(kU8, zx), ys = m.scalar(sy), yz = m.zero_point(kU8, zy);
  const std::string wq = m.fresh("wq"), ws = m.fresh("ws"), wz = m.fresh("wz"), bq = m.fresh("bq");
  auto* t = m.b.initializer(wq, kI8, {3, 2, 3, 3});
  for (int32_t v : w) t->add_int32_data(v);
  m.b.raw_floats(ws, {3}, sw);
  auto* zt = m.b.initializer(wz, kI8, {3});
  for (int i = 0; i < 3; ++i) zt->add_int32_data(0);
  auto* bt = m.b.initializer(bq, kI32, {3});
  for (int32_t v : bias) bt->add_int32_data(v);
  m.b.node("QuantizeLinear", {"x", xs, xz}, {"xq"}, "q");
  attr_ints(m.b.node("QLinearConv", {"xq", xs, xz, wq, ws, wz, ys, yz, bq}, {"yq"}, "qconv"), "pads", {1, 1, 1, 1});
  m.b.node("DequantizeLinear", {"yq", ys, yz}, {"y"}, "dq");
  const CompileResult r = compile(m.bytes(), fs::path(), CompileOptions{});
  ASSERT_TRUE(r) << r.error();
  EXPECT_EQ(r.partition.rejected, 0u);
  const auto x = random_input(50, 17);
  const auto acc = int_conv3x3(x, sx, zx, w, bias);
  std::vector<float> want(75);
  for (size_t k = 0; k < want.size(); ++k)  // requantized to the output's (sy, zy)
    want[k] = static_cast<float>(quantize(static_cast<float>(acc[k]) * (sx * sw[k / 25]), sy, zy, 0, 255) - zy) * sy;
  expect_conv_output(r.pte, x, want);
}

// onnxruntime's quantize_static form of a small CNN (uint8 activations, per-channel int8 weights,
// int32 biases, Relu kept before its QuantizeLinear): stem Conv 3x3 s2 (C=3) + Relu, depthwise 3x3
// dilation 2, pointwise, a residual Add, Relu, a grouped conv (4 channels per group), global average
// pooling (float) and a Gemm head whose output is dequantized.
struct StaticCnn {
  std::vector<uint8_t> bytes;
  StaticCnn() {
    QdqBuilder m;
    m.b.input("x", kF32, {1, 3, 9, 11});
    m.b.output("y", kF32, {1, 5});
    const auto conv = [&](const std::string& x, int64_t ic, int64_t oc, int64_t k, int64_t group, float sx,
                          std::vector<int64_t> extra_pads, int64_t stride, int64_t dil) {
      std::vector<float> sw, sb;
      for (int64_t i = 0; i < oc; ++i) sw.push_back(0.004f + 0.0007f * float(i % 5));
      for (float s : sw) sb.push_back(sx * s);
      const auto w = m.random_q(static_cast<size_t>(oc * (ic / group) * k * k), -127, 127);
      const auto b = m.random_q(static_cast<size_t>(oc), -3000, 3000);
      const std::string y = m.fresh("conv");
      auto* n = m.b.node("Conv", {x, m.dq_const(kI8, {oc, ic / group, k, k}, w, sw, 0), m.dq_const(kI32, {oc}, b, sb, 0)},
                         {y}, y);
      attr_ints(n, "pads", extra_pads);
      attr_ints(n, "strides", {stride, stride});
      attr_ints(n, "dilations", {dil, dil});
      attr_int(n, "group", group);
      return y;
    };
    const auto relu = [&](const std::string& x) {
      const std::string y = m.fresh("relu");
      m.b.node("Relu", {x}, {y}, y);
      return y;
    };
    const std::string x = m.qdq("x", 0.02f, 128);
    const std::string stem = m.qdq(relu(conv(x, 3, 8, 3, 1, 0.02f, {1, 1, 1, 1}, 2, 1)), 0.03f, 0);    // [1, 8, 5, 6]
    const std::string dw = m.qdq(conv(stem, 8, 8, 3, 8, 0.03f, {2, 2, 2, 2}, 1, 2), 0.05f, 120);       // dilation 2
    const std::string pw = m.qdq(conv(dw, 8, 8, 1, 1, 0.05f, {0, 0, 0, 0}, 1, 1), 0.04f, 130);
    const std::string sum = m.fresh("add");
    m.b.node("Add", {stem, pw}, {sum}, sum);
    const std::string r = m.qdq(relu(m.qdq(sum, 0.06f, 125)), 0.03f, 0);
    const std::string grouped = m.qdq(conv(r, 8, 8, 3, 2, 0.03f, {1, 1, 1, 1}, 1, 1), 0.05f, 127);
    m.b.node("GlobalAveragePool", {grouped}, {"gap"}, "gap");
    m.b.node("Flatten", {"gap"}, {"flat"}, "flat");
    const std::string f = m.qdq("flat", 0.01f, 128);
    std::vector<float> sw, sb;
    for (int i = 0; i < 5; ++i) sw.push_back(0.003f + 0.001f * float(i));
    for (float s : sw) sb.push_back(0.01f * s);
    auto* gemm = m.b.node("Gemm", {f, m.dq_const(kI8, {5, 8}, m.random_q(40, -127, 127), sw, 0),
                                   m.dq_const(kI32, {5}, m.random_q(5, -800, 800), sb, 0)},
                          {"logits"}, "gemm");
    attr_int(gemm, "transB", 1);
    const std::string sy = m.scalar(0.02f), zy = m.zero_point(kU8, 100);
    m.b.node("QuantizeLinear", {"logits", sy, zy}, {"yq"}, "yq");
    m.b.node("DequantizeLinear", {"yq", sy, zy}, {"y"}, "ydq");
    bytes = m.bytes();
  }
};

std::map<std::string, size_t> delegate_ops(const std::vector<uint8_t>& pte) {
  const InspectResult report = inspect(pte);
  EXPECT_TRUE(report);
  EXPECT_EQ(report.report.delegates.size(), 1u);
  return report ? report.report.delegates.at(0).ops : std::map<std::string, size_t>{};
}

// Activations stay int8 between the q8ta operators, and the numbers are the fake-quantized float
// program's (lower-qdq, run with lower-q8ta skipped): the same arithmetic done another way.
TEST(Qdq, StaticInt8CnnRunsOnQ8taOperatorsAndMatchesFakeQuantization) {
  const StaticCnn model;
  const CompileResult r = compile(model.bytes, fs::path(), CompileOptions{});
  ASSERT_TRUE(r) << r.error();
  EXPECT_EQ(r.partition.rejected, 0u);
  const auto ops = delegate_ops(r.pte);
  for (const char* op : {"et_vk.q8ta_conv2d.default", "et_vk.q8ta_conv2d_dw.default", "et_vk.q8ta_conv2d_pw.default",
                         "et_vk.q8ta_add.default", "et_vk.q8ta_relu.default", "et_vk.q8ta_linear_gemv.default"})
    EXPECT_TRUE(ops.count(op)) << op;
  EXPECT_EQ(ops.at("et_vk.q8ta_conv2d.default"), 2u);  // the stem (relu fused) and the grouped one
  // In: the input and the pooled features; out: before pooling and the logits.
  EXPECT_EQ(ops.at("quantized_decomposed.quantize_per_tensor.default"), 2u);
  EXPECT_EQ(ops.at("quantized_decomposed.dequantize_per_tensor.default"), 2u);
  EXPECT_EQ(ops.count("aten.round.default"), 0u);
  CompileOptions fake;
  fake.skip_passes = {"lower-q8ta"};
  const CompileResult f = compile(model.bytes, fs::path(), fake);
  ASSERT_TRUE(f) << f.error();
  EXPECT_EQ(delegate_ops(f.pte).count("et_vk.q8ta_add.default"), 0u);
  // cpu; Vulkan with integer dot products (where the device has them: lavapipe does) and without,
  // under the validation layer.
  std::vector<std::pair<const char*, const char*>> backends = {{"cpu", "1"}};
  if (!runtime::vulkan_device_name().empty()) backends.insert(backends.end(), {{"vulkan", "1"}, {"vulkan", "0"}});
  setenv("VKC_VULKAN_VALIDATION", "1", 1);
  const uint64_t messages = runtime::vulkan_validation_messages();
  size_t exact = 0, total = 0;
  for (uint32_t seed : {1u, 2u, 3u, 4u}) {
    const auto x = random_input(3 * 9 * 11, seed);
    const auto want = run(f.pte, x, {1, 3, 9, 11});
    for (const auto& [b, dot] : backends) {
      setenv("VKC_VULKAN_INT_DOT", dot, 1);
      const auto got = run(r.pte, x, {1, 3, 9, 11}, b);
      ASSERT_EQ(got.size(), want.size());
      for (size_t i = 0; i < got.size(); ++i) {
        EXPECT_LE(std::abs(got[i] - want[i]), 0.02f * 1.01f) << b << " seed " << seed << " logit " << i;  // 1 step
        exact += got[i] == want[i];
        ++total;
      }
    }
  }
  unsetenv("VKC_VULKAN_INT_DOT");
  unsetenv("VKC_VULKAN_VALIDATION");
  EXPECT_EQ(runtime::vulkan_validation_messages(), messages) << "validation layer messages (see stderr)";
  EXPECT_GE(exact, total * 9 / 10) << exact << " of " << total << " logits exact";
}

// Every Vulkan kernel variant of the int8 convolution and linear (integer dot products or not; a
// 4 x 4 or 4 x 8 output tile per invocation from prepacked weights or, on GPUs, a workgroup per output
// word) computes the cpu kernels' numbers: a 3x3 convolution from 16 to 12 channels (36 tap x
// channel-group pairs, + relu; the 4 x 8 tiles' second one half outside) and a linear with K = 512,
// each between QDQs with int8 activations.
std::vector<uint8_t> q8ta_layer(bool conv) {
  QdqBuilder m;
  const auto q8 = [&](const std::string& x, float s, int64_t z) {
    const std::string sc = m.scalar(s), zp = m.zero_point(kI8, z), q = m.fresh("q"), d = m.fresh("dq");
    m.b.node("QuantizeLinear", {x, sc, zp}, {q}, q);
    m.b.node("DequantizeLinear", {q, sc, zp}, {d}, d);
    return d;
  };
  const int64_t oc = conv ? 12 : 6, k = conv ? 16 * 9 : 512;
  std::vector<float> sw, sb;
  for (int64_t i = 0; i < oc; ++i) sw.push_back(0.002f + 0.0003f * float(i % 7));
  for (float s : sw) sb.push_back(0.02f * s);
  const auto w = m.random_q(static_cast<size_t>(oc * k), -127, 127);
  const auto b = m.random_q(static_cast<size_t>(oc), -2000, 2000);
  if (conv) {
    m.b.input("x", kF32, {1, 16, 7, 9});
    m.b.output("y", kF32, {1, 12, 7, 9});
    auto* n = m.b.node("Conv", {q8("x", 0.02f, -3), m.dq_const(kI8, {12, 16, 3, 3}, w, sw, 0), m.dq_const(kI32, {12}, b, sb, 0)},
                       {"c"}, "conv");
    attr_ints(n, "pads", {1, 1, 1, 1});
    m.b.node("Relu", {"c"}, {"r"}, "relu");
    m.b.node("Identity", {q8("r", 0.05f, -128)}, {"y"}, "out");
  } else {
    m.b.input("x", kF32, {1, 512});
    m.b.output("y", kF32, {1, 6});
    auto* n = m.b.node("Gemm", {q8("x", 0.02f, 7), m.dq_const(kI8, {6, 512}, w, sw, 0), m.dq_const(kI32, {6}, b, sb, 0)},
                       {"g"}, "gemm");
    attr_int(n, "transB", 1);
    m.b.node("Identity", {q8("g", 0.03f, 5)}, {"y"}, "out");
  }
  return m.bytes();
}

TEST(Qdq, Q8taKernelVariantsAgreeWithTheCpuKernels) {
  if (runtime::vulkan_device_name().empty()) GTEST_SKIP() << "no Vulkan device";
  setenv("VKC_VULKAN_VALIDATION", "1", 1);
  const uint64_t messages = runtime::vulkan_validation_messages();
  for (bool conv : {true, false}) {
    const CompileResult r = compile(q8ta_layer(conv), fs::path(), CompileOptions{});
    ASSERT_TRUE(r) << r.error();
    EXPECT_EQ(delegate_ops(r.pte).count(conv ? "et_vk.q8ta_conv2d.default" : "et_vk.q8ta_linear_gemv.default"), 1u);
    const std::vector<int64_t> shape = conv ? std::vector<int64_t>{1, 16, 7, 9} : std::vector<int64_t>{1, 512};  // inputs
    const auto x = random_input(conv ? 16 * 63 : 512, 31);
    const auto want = run(r.pte, x, shape);
    const std::string kernel = conv ? "q8ta_conv2d" : "q8ta_linear";
    for (const char* dot : {"1", "0"})
      for (const char* gpu : {"0", "1"})  // 1: the GPU kernel choices (split sums) on any device
        for (const char* c8 : {"0", "1"}) {  // unsplit convolutions: 4 or 8 output channels per invocation
          if (gpu[0] == '1' && c8[0] == '1') continue;
          setenv("VKC_VULKAN_INT_DOT", dot, 1);
          setenv("VKC_VULKAN_GPU_KERNELS", gpu, 1);
          setenv("VKC_VULKAN_Q8TA_C8", c8, 1);
          // Convolutions that do not split the sum read weights prepacked 4 channels per word (_w4).
          const std::string tile = gpu[0] == '1' ? "_splitk" : !conv ? "" : c8[0] == '1' ? "_w4c8" : "_w4";
          const std::string variant = kernel + (dot[0] == '1' ? "_dot" : "") + tile + "_i32_buffer";
          const uint64_t before = runtime::vulkan_variant_dispatches(variant);
          const auto got = run(r.pte, x, shape, "vulkan");
          EXPECT_GT(runtime::vulkan_variant_dispatches(variant), before) << variant;
          ASSERT_EQ(got.size(), want.size());
          size_t exact = 0;
          for (size_t i = 0; i < got.size(); ++i) {
            EXPECT_LE(std::abs(got[i] - want[i]), (conv ? 0.05f : 0.03f) * 1.01f) << variant << " " << i;  // 1 step
            exact += got[i] == want[i];
          }
          EXPECT_GE(exact, got.size() * 95 / 100) << variant;
        }
  }
  unsetenv("VKC_VULKAN_INT_DOT");
  unsetenv("VKC_VULKAN_GPU_KERNELS");
  unsetenv("VKC_VULKAN_Q8TA_C8");
  unsetenv("VKC_VULKAN_VALIDATION");
  EXPECT_EQ(runtime::vulkan_validation_messages(), messages) << "validation layer messages (see stderr)";
}

// Depthwise int8 convolutions, 3 wide at strides 1 and 2 (the kernels' shared-row path) and 5 wide
// (the general one), on odd widths (the last 4-position tile partial), agree with the cpu kernels.
TEST(Qdq, DepthwiseInt8ConvolutionsAgreeWithTheCpuKernels) {
  if (runtime::vulkan_device_name().empty()) GTEST_SKIP() << "no Vulkan device";
  QdqBuilder m;
  m.b.input("x", kF32, {1, 8, 9, 11});
  m.b.output("y", kF32, {1, 8, 3, 3});
  const auto dw = [&](const std::string& x, int64_t k, int64_t stride, float s, int64_t z) {
    std::vector<float> sw(8, 0.01f), sb;
    for (float v : sw) sb.push_back(0.03f * v);
    const std::string y = m.fresh("dw");
    auto* n = m.b.node("Conv", {x, m.dq_const(kI8, {8, 1, k, k}, m.random_q(8 * k * k, -127, 127), sw, 0),
                                m.dq_const(kI32, {8}, m.random_q(8, -300, 300), sb, 0)},
                       {y}, y);
    attr_int(n, "group", 8);
    attr_ints(n, "pads", {k / 2, k / 2, k / 2, k / 2});
    attr_ints(n, "strides", {stride, stride});
    return m.qdq(y, s, z);
  };
  const std::string a = dw(m.qdq("x", 0.03f, 120), 3, 1, 0.05f, 128);  // [1, 8, 9, 11]
  const std::string b = dw(a, 3, 2, 0.05f, 125);                        // [1, 8, 5, 6]
  m.b.node("Identity", {dw(b, 5, 2, 0.05f, 130)}, {"y"}, "out");        // [1, 8, 3, 3]
  const CompileResult r = compile(m.bytes(), fs::path(), CompileOptions{});
  ASSERT_TRUE(r) << r.error();
  EXPECT_EQ(delegate_ops(r.pte).at("et_vk.q8ta_conv2d_dw.default"), 3u);
  for (uint32_t seed : {7u, 8u}) {
    const auto x = random_input(8 * 9 * 11, seed);
    const auto want = run(r.pte, x, {1, 8, 9, 11});
    for (const char* gpu : {"0", "1"}) {
      setenv("VKC_VULKAN_GPU_KERNELS", gpu, 1);
      const auto got = run(r.pte, x, {1, 8, 9, 11}, "vulkan");
      ASSERT_EQ(got.size(), want.size());
      for (size_t i = 0; i < got.size(); ++i)
        EXPECT_LE(std::abs(got[i] - want[i]), 0.05f * 1.01f) << "gpu kernels " << gpu << " seed " << seed << " " << i;
    }
  }
  unsetenv("VKC_VULKAN_GPU_KERNELS");
}

// onnxruntime's quantize_static around a fire module's concat and MaxPool: the concat's output is
// quantized (Q -> DQ), max-pooled, and quantized again with the same parameters before the next
// convolution. drop-requantized-qdq removes the first round trip (computed otherwise as float fake
// quantization: div, round, clamp, mul): the same numbers, exactly, on every backend. With a
// different scale after the pool, or an average pool, the round trip stays.
std::vector<uint8_t> fire_module(float pooled_scale, const char* pool) {
  QdqBuilder m;
  m.b.input("x", kF32, {1, 4, 8, 8});
  m.b.output("y", kF32, {1, 4, 4, 4});
  const auto conv = [&](const std::string& x, int64_t ci, int64_t co, int64_t k, float s, int64_t z) {
    std::vector<float> sw(co, 0.004f), sb;
    for (float v : sw) sb.push_back(0.02f * v);
    const std::string y = m.fresh("conv");
    auto* n = m.b.node("Conv", {x, m.dq_const(kI8, {co, ci, k, k}, m.random_q(co * ci * k * k, -127, 127), sw, 0),
                                m.dq_const(kI32, {co}, m.random_q(co, -500, 500), sb, 0)},
                       {y}, y);
    if (k == 3) attr_ints(n, "pads", {1, 1, 1, 1});
    const std::string r = m.fresh("relu");
    m.b.node("Relu", {y}, {r}, r);
    return m.qdq(r, s, z);
  };
  const std::string x = m.qdq("x", 0.02f, 128);
  const std::string a = conv(x, 4, 8, 1, 0.03f, 0), b = conv(x, 4, 8, 3, 0.03f, 0);
  attr_int(m.b.node("Concat", {a, b}, {"cat"}, "cat"), "axis", 1);
  const std::string c = m.qdq("cat", 0.03f, 0);
  auto* pn = m.b.node(pool, {c}, {"pool"}, "pool");
  attr_ints(pn, "kernel_shape", {2, 2});
  attr_ints(pn, "strides", {2, 2});
  const std::string pooled = m.qdq("pool", pooled_scale, 0);
  m.b.node("Identity", {conv(pooled, 16, 4, 1, 0.05f, 0)}, {"y"}, "out");
  return m.bytes();
}

TEST(Qdq, ARoundTripQuantizedAgainAlikeAfterMaxPoolIsDropped) {
  std::vector<const char*> backends = {"cpu"};
  if (!runtime::vulkan_device_name().empty()) backends.push_back("vulkan");
  for (const auto& [scale, pool, dropped] : {std::tuple{0.03f, "MaxPool", true}, std::tuple{0.031f, "MaxPool", false},
                                              std::tuple{0.03f, "AveragePool", false}}) {
    SCOPED_TRACE(std::string(pool) + " " + std::to_string(scale));
    const auto bytes = fire_module(scale, pool);
    const CompileResult r = compile(bytes, fs::path(), CompileOptions{});
    ASSERT_TRUE(r) << r.error();
    CompileOptions keep;
    keep.skip_passes = {"drop-requantized-qdq"};
    const CompileResult k = compile(bytes, fs::path(), keep);
    ASSERT_TRUE(k) << k.error();
    // Without the pass the concat's round trip is fake quantization; with it, only where it must stay.
    EXPECT_EQ(delegate_ops(k.pte).count("aten.round.default"), 1u);
    EXPECT_EQ(delegate_ops(r.pte).count("aten.round.default"), dropped ? 0u : 1u);
    EXPECT_EQ(delegate_ops(r.pte).at("et_vk.q8ta_conv2d_pw.default"), 2u);  // the int8 convolutions stay int8
    for (uint32_t seed : {5u, 6u}) {
      const auto in = random_input(4 * 64, seed);
      for (const char* b : backends) {
        const auto want = run(k.pte, in, {1, 4, 8, 8}, b), got = run(r.pte, in, {1, 4, 8, 8}, b);
        ASSERT_EQ(got.size(), 64u);
        EXPECT_EQ(got, want) << b << " seed " << seed;
      }
    }
  }
}

TEST(Qdq, AQuantizedGraphOutputIsReportedNotMiscompiled) {
  QdqBuilder m;
  m.b.input("x", kF32, {1, 4});
  m.b.output("q", kU8, {1, 4});
  m.b.node("QuantizeLinear", {"x", m.scalar(0.1f), m.zero_point(kU8, 3)}, {"q"}, "quant_out");
  const CompileResult r = compile(m.bytes(), fs::path(), CompileOptions{});
  EXPECT_FALSE(r);
  EXPECT_NE(r.error().find("QuantizeLinear"), std::string::npos) << r.error();
}

}  // namespace
}  // namespace vkc::test
