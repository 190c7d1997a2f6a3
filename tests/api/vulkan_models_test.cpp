// Small ONNX models whose operators take special paths in the vulkan backend, run on the GPU
// (lavapipe in CI) against the cpu backend.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include <functional>

#include <random>

#include "api_test_support.h"
#include "vkc/ir/half.h"
#include "vkc/runtime/vulkan.h"

namespace vkc::test {
namespace {

std::vector<float> normal(size_t n, uint32_t seed) { return normal_floats(n, seed); }

// A 1-D convolution ([N, C, L]; stride 2, padding 1, dilation 2, 2 groups) then Relu: the vulkan
// backend runs it as a 2-D convolution of height 1 between views.
TEST(VulkanModels, OneDimensionalConvolutionMatchesCpu) {
  if (runtime::vulkan_device_name().empty()) GTEST_SKIP() << "no Vulkan device";
  ModelBuilder b(8, 13);
  b.input("x", kF32, {1, 4, 19});
  b.output("y", kF32, {1, 6, 9});
  b.raw_floats("w", {6, 2, 3}, normal(36, 1));
  b.raw_floats("bias", {6}, normal(6, 2));
  auto* conv = b.node("Conv", {"x", "w", "bias"}, {"c"}, "conv1d");
  attr_ints(conv, "strides", {2});
  attr_ints(conv, "pads", {1, 1});
  attr_ints(conv, "dilations", {2});
  attr_int(conv, "group", 2);
  b.node("Relu", {"c"}, {"y"}, "relu");
  const CompileResult r = compile(b.bytes(), fs::path(), CompileOptions{});
  ASSERT_TRUE(r) << r.error();
  const std::vector<Tensor> in = {Tensor::of(ir::DType::Float32, {1, 4, 19}, normal(76, 3))};
  RunOptions vk;
  vk.backend = "vulkan";
  const RunResult cpu = vkc::run(r.pte, in), gpu = vkc::run(r.pte, in, vk);
  ASSERT_TRUE(cpu) << describe(cpu.diagnostics);
  ASSERT_TRUE(gpu) << describe(gpu.diagnostics);
  ASSERT_EQ(gpu.outputs.at(0).shape, (std::vector<int64_t>{1, 6, 9}));
  double diff = 0, scale = 0;
  for (int64_t i = 0; i < 54; ++i) {
    diff = std::max(diff, std::abs(cpu.outputs[0].get_f(i) - gpu.outputs[0].get_f(i)));
    scale = std::max(scale, std::abs(cpu.outputs[0].get_f(i)));
  }
  EXPECT_GT(scale, 0.5);
  EXPECT_LT(diff, 1e-5);
}

// Rank-5 shape ops (as attention exporters write q, k, v splits): buffers of rank 5-8 go through
// copy_nd.glsl; the model's input and output are rank 5 too (staging).
TEST(VulkanModels, RankFiveShapeOpsMatchCpu) {
  if (runtime::vulkan_device_name().empty()) GTEST_SKIP() << "no Vulkan device";
  ModelBuilder b(8, 13);
  b.input("x", kF32, {4, 3, 2, 5});
  b.output("picked", kF32, {2, 2, 4, 5});
  b.output("moved", kF32, {3, 1, 2, 4, 5});
  b.output("wide", kF32, {2, 4, 3, 2, 5});
  auto ints = [&](const std::string& name, std::vector<int64_t> v, bool scalar = false) {
    auto* t = b.initializer(name, onnx::TensorProto_DataType_INT64, scalar ? std::vector<int64_t>{} : std::vector<int64_t>{int64_t(v.size())});
    for (int64_t x : v) t->add_int64_data(x);
  };
  ints("shape5", {1, 4, 3, 2, 5});
  ints("starts", {1});
  ints("ends", {3});
  ints("axes", {0});
  ints("zero", {0}, true);
  ints("wide_shape", {2, 4, 3, 2, 5});
  b.node("Reshape", {"x", "shape5"}, {"x5"}, "reshape");
  b.node("Expand", {"x5", "wide_shape"}, {"wide"}, "expand");  // a leading (folded) dim broadcast
  attr_ints(b.node("Transpose", {"x5"}, {"t"}, "transpose"), "perm", {2, 0, 3, 1, 4});  // [3, 1, 2, 4, 5]
  b.node("Identity", {"t"}, {"moved"}, "out5");
  b.node("Slice", {"t", "starts", "ends", "axes"}, {"s"}, "slice");                      // [2, 1, 2, 4, 5]
  attr_int(b.node("Gather", {"s", "zero"}, {"picked"}, "select"), "axis", 1);            // [2, 2, 4, 5]
  const CompileResult r = compile(b.bytes(), fs::path(), CompileOptions{});
  ASSERT_TRUE(r) << r.error();
  EXPECT_EQ(r.partition.rejected, 0u);
  const std::vector<Tensor> in = {Tensor::of(ir::DType::Float32, {4, 3, 2, 5}, normal(120, 4))};
  RunOptions vk;
  vk.backend = "vulkan";
  const RunResult cpu = vkc::run(r.pte, in), gpu = vkc::run(r.pte, in, vk);
  ASSERT_TRUE(cpu) << describe(cpu.diagnostics);
  ASSERT_TRUE(gpu) << describe(gpu.diagnostics);
  for (size_t o = 0; o < 3; ++o) {
    ASSERT_EQ(gpu.outputs.at(o).shape, cpu.outputs.at(o).shape);
    for (int64_t i = 0; i < cpu.outputs[o].numel(); ++i)
      ASSERT_EQ(gpu.outputs[o].get_f(i), cpu.outputs[o].get_f(i)) << o << " " << i;
  }
  // Spot check against the definition: picked[a, c, d, e] = x[c, 1 + a, d, e] (x5 = [1, 4, 3, 2, 5]).
  EXPECT_EQ(cpu.outputs[0].get_f(((1 * 2 + 1) * 4 + 2) * 5 + 3), in[0].get_f(((2 * 3 + 2) * 2 + 1) * 5 + 3));
}

// Gather with constant indices along a non-leading axis: index_select (index_select.glsl).
TEST(VulkanModels, IndexSelectMatchesCpu) {
  if (runtime::vulkan_device_name().empty()) GTEST_SKIP() << "no Vulkan device";
  ModelBuilder b(8, 13);
  b.input("x", kF32, {2, 4, 3, 5});
  b.output("y", kF32, {2, 3, 3, 5});
  auto* idx = b.initializer("idx", onnx::TensorProto_DataType_INT64, {3});
  for (int64_t v : {3, 0, -2}) idx->add_int64_data(v);
  attr_int(b.node("Gather", {"x", "idx"}, {"y"}, "pick"), "axis", 1);
  const CompileResult r = compile(b.bytes(), fs::path(), CompileOptions{});
  ASSERT_TRUE(r) << r.error();
  const InspectResult report = inspect(r.pte);
  EXPECT_EQ(report.report.delegates.at(0).ops.count("aten.index_select.default"), 1u);
  const std::vector<Tensor> in = {Tensor::of(ir::DType::Float32, {2, 4, 3, 5}, normal(120, 6))};
  RunOptions vk;
  vk.backend = "vulkan";
  const RunResult cpu = vkc::run(r.pte, in), gpu = vkc::run(r.pte, in, vk);
  ASSERT_TRUE(cpu) << describe(cpu.diagnostics);
  ASSERT_TRUE(gpu) << describe(gpu.diagnostics);
  for (int64_t i = 0; i < 90; ++i) ASSERT_EQ(gpu.outputs.at(0).get_f(i), cpu.outputs.at(0).get_f(i)) << i;
  // y[1, 2, c, w] = x[1, 2 (= -2 + 4), c, w]
  EXPECT_EQ(cpu.outputs[0].get_f(((1 * 3 + 2) * 3 + 1) * 5 + 4), in[0].get_f(((1 * 4 + 2) * 3 + 1) * 5 + 4));
}

// Broadcasting over the folded leading dims of rank-5 tensors is refused with one error (it would
// read wrong); a scalar operand is fine.
TEST(VulkanModels, RankFiveBroadcastsAreComputedOrRefused) {
  if (runtime::vulkan_device_name().empty()) GTEST_SKIP() << "no Vulkan device";
  for (bool partial : {false, true}) {
    ModelBuilder b(8, 13);
    b.input("x", kF32, {2, 4, 3, 2, 5});
    b.input("y", kF32, {partial ? int64_t{1} : int64_t{2}, 4, 3, 2, 5});
    b.output("z", kF32, {2, 4, 3, 2, 5});
    b.raw_floats("two", {}, {2.f});
    b.node("Mul", {b.node("Add", {"x", "y"}, {"s"}, "add")->output(0), "two"}, {"z"}, "scale");
    const CompileResult r = compile(b.bytes(), fs::path(), CompileOptions{});
    ASSERT_TRUE(r) << r.error();
    RunOptions vk;
    vk.backend = "vulkan";
    Session s = Session::open(r.pte, vk);
    if (partial) {
      EXPECT_FALSE(s);
      ASSERT_EQ(s.diagnostics().size(), 1u);
      EXPECT_NE(s.diagnostics()[0].message.find("folded leading dims"), std::string::npos) << s.diagnostics()[0].message;
      continue;
    }
    ASSERT_TRUE(s) << describe(s.diagnostics());
    const auto x = normal(240, 1), y = normal(240, 2);
    const RunResult out = s.run({Tensor::of(ir::DType::Float32, {2, 4, 3, 2, 5}, x),
                                 Tensor::of(ir::DType::Float32, {2, 4, 3, 2, 5}, y)});
    ASSERT_TRUE(out) << describe(out.diagnostics);
    for (int64_t i = 0; i < 240; ++i) EXPECT_FLOAT_EQ(out.outputs[0].get_f(i), (x[i] + y[i]) * 2.f) << i;
  }
}

// MatMul with broadcast batch dims ([1, 2, 4, 8] x [1, 1, 8, 3]) and a rank-3 x non-constant rank-2
// product: expand + bmm and one mm over the flattened rows, against a direct computation.
TEST(VulkanModels, BroadcastMatMulsMatchTheDefinition) {
  ModelBuilder b(8, 13);
  b.input("a", kF32, {1, 2, 4, 8});
  b.input("w", kF32, {1, 1, 8, 3});
  b.input("v", kF32, {8, 5});
  b.output("y", kF32, {1, 2, 4, 3});
  b.output("z", kF32, {1, 2, 4, 5});
  b.node("MatMul", {"a", "w"}, {"y"}, "bcast");
  b.node("MatMul", {"a", "v"}, {"z"}, "rows");
  const CompileResult r = compile(b.bytes(), fs::path(), CompileOptions{});
  ASSERT_TRUE(r) << r.error();
  EXPECT_EQ(r.partition.rejected, 0u);
  const auto a = normal(64, 7), w = normal(24, 8), v = normal(40, 9);
  const std::vector<Tensor> in = {Tensor::of(ir::DType::Float32, {1, 2, 4, 8}, a),
                                  Tensor::of(ir::DType::Float32, {1, 1, 8, 3}, w),
                                  Tensor::of(ir::DType::Float32, {8, 5}, v)};
  std::vector<const char*> backends = {"cpu"};
  if (!runtime::vulkan_device_name().empty()) backends.push_back("vulkan");
  for (const char* backend : backends) {
    RunOptions o;
    o.backend = backend;
    const RunResult out = vkc::run(r.pte, in, o);
    ASSERT_TRUE(out) << describe(out.diagnostics);
    for (int64_t row = 0; row < 8; ++row) {  // (head, s) flattened
      for (int64_t c = 0; c < 3; ++c) {
        double want = 0;
        for (int64_t k = 0; k < 8; ++k) want += a[row * 8 + k] * w[k * 3 + c];
        EXPECT_NEAR(out.outputs[0].get_f(row * 3 + c), want, 1e-5) << backend;
      }
      for (int64_t c = 0; c < 5; ++c) {
        double want = 0;
        for (int64_t k = 0; k < 8; ++k) want += a[row * 8 + k] * v[k * 5 + c];
        EXPECT_NEAR(out.outputs[1].get_f(row * 5 + c), want, 1e-5) << backend;
      }
    }
  }
}

}  // namespace
}  // namespace vkc::test

namespace vkc::test {
namespace {

// LayerNormalization and an RMSNorm (as exporters decompose it; fused to et_vk.rms_norm) over rows of
// 300+ elements: the vulkan backend runs them a workgroup per row (layer_norm_wg.glsl). Width-packed
// and channels-packed textures, and buffers (texture limits too small for the rows), against the cpu.
TEST(VulkanModels, LongRowNormsMatchCpuOnEveryStorage) {
  if (runtime::vulkan_device_name().empty()) GTEST_SKIP() << "no Vulkan device";
  for (const std::vector<int64_t>& shape : {std::vector<int64_t>{1, 1, 3, 301}, std::vector<int64_t>{1, 5, 3, 301}}) {
    for (bool small_textures : {false, true}) {
      const int64_t w = shape.back();
      int64_t n = 1;
      for (int64_t d : shape) n *= d;
      ModelBuilder b(8, 17);
      const std::vector<std::variant<int64_t, std::string>> dims(shape.begin(), shape.end());
      b.input("x", kF32, dims);
      b.output("y", kF32, dims);
      b.output("z", kF32, dims);
      b.raw_floats("g", {w}, normal(w, 4));
      b.raw_floats("beta", {w}, normal(w, 5));
      auto* ln = b.node("LayerNormalization", {"x", "g", "beta"}, {"y"}, "ln");
      attr_int(ln, "axis", -1);
      b.raw_floats("two", {}, {2.f});
      b.raw_floats("eps", {}, {1e-5f});
      auto* mean = b.node("ReduceMean", {"sq"}, {"ms"}, "ms");
      attr_ints(mean, "axes", {-1});
      b.node("Pow", {"x", "two"}, {"sq"}, "sq");
      b.node("Add", {"ms", "eps"}, {"mse"}, "mse");
      b.node("Sqrt", {"mse"}, {"rms"}, "rms");
      b.node("Reciprocal", {"rms"}, {"inv"}, "inv");
      b.node("Mul", {"x", "inv"}, {"xn"}, "xn");
      b.node("Mul", {"xn", "g"}, {"z"}, "z");
      // ReduceMean before its input in the file: the importer sorts nodes.
      CompileOptions o;
      if (small_textures) o.texture_limits = TextureLimits{32, 32, 32};
      const CompileResult r = compile(b.bytes(), fs::path(), o);
      ASSERT_TRUE(r) << r.error();
      bool fused = false;
      for (const auto& node : r.partition.nodes) fused = fused || node.op == "vk.et_vk.rms_norm.default";
      EXPECT_TRUE(fused);
      const std::vector<Tensor> in = {Tensor::of(ir::DType::Float32, shape, normal(static_cast<size_t>(n), 6))};
      RunOptions vk;
      vk.backend = "vulkan";
      const RunResult cpu = vkc::run(r.pte, in), gpu = vkc::run(r.pte, in, vk);
      ASSERT_TRUE(cpu) << describe(cpu.diagnostics);
      ASSERT_TRUE(gpu) << describe(gpu.diagnostics);
      for (size_t o_i = 0; o_i < 2; ++o_i) {
        double diff = 0, scale = 0;
        for (int64_t i = 0; i < n; ++i) {
          diff = std::max(diff, std::abs(cpu.outputs[o_i].get_f(i) - gpu.outputs[o_i].get_f(i)));
          scale = std::max(scale, std::abs(cpu.outputs[o_i].get_f(i)));
        }
        EXPECT_GT(scale, 0.5);
        EXPECT_LT(diff, 1e-4) << "output " << o_i << ", shape [" << shape[1] << ",..], small textures " << small_textures;
      }
    }
  }
}


// Equal of two integer tensors (as le and ge, and-ed), broadcasting [2, 3, 5] against [3, 1]:
// against the definition, on cpu and vulkan.
TEST(VulkanModels, EqualOfTwoIntegerTensorsMatchesTheDefinition) {
  const std::vector<int64_t> sa{2, 3, 5}, sb{3, 1};
  std::vector<int64_t> a(30), b(3);
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<int64_t>(i % 4) - 1;
  for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<int64_t>(i) - 1;
  ModelBuilder m(8, 17);
  m.input("a", onnx::TensorProto_DataType_INT64, {2, 3, 5});
  m.input("b", onnx::TensorProto_DataType_INT64, {3, 1});
  m.output("y", onnx::TensorProto_DataType_BOOL, {2, 3, 5});
  m.node("Equal", {"a", "b"}, {"y"}, "eq");
  const CompileResult r = compile(m.bytes(), fs::path(), CompileOptions{});
  ASSERT_TRUE(r) << r.error();
  for (const auto& n : r.partition.nodes) EXPECT_NE(n.op, "aten.eq.Tensor") << n.name;
  for (const std::string backend : {"cpu", "vulkan"}) {
    if (backend == "vulkan" && runtime::vulkan_device_name().empty()) continue;
    RunOptions ro;
    ro.backend = backend;
    const RunResult got = vkc::run(r.pte, {Tensor::of(ir::DType::Int64, sa, a), Tensor::of(ir::DType::Int64, sb, b)}, ro);
    ASSERT_TRUE(got) << describe(got.diagnostics);
    for (int64_t i = 0; i < 30; ++i)
      EXPECT_EQ(got.outputs.at(0).get_i(i) != 0, a[static_cast<size_t>(i)] == b[static_cast<size_t>((i / 5) % 3)])
          << backend << " at " << i;
  }
}

// Integer comparisons with one number (aten.<op>.Scalar, in both operand orders), int64 inputs
// of a few shapes: against the definition computed here, on the cpu and vulkan backends.
TEST(VulkanModels, IntegerComparisonsWithANumberMatchTheDefinition) {
  const std::vector<std::pair<const char*, std::function<bool(int64_t, int64_t)>>> ops = {
      {"Equal", [](int64_t a, int64_t b) { return a == b; }},
      {"Less", [](int64_t a, int64_t b) { return a < b; }},
      {"LessOrEqual", [](int64_t a, int64_t b) { return a <= b; }},
      {"Greater", [](int64_t a, int64_t b) { return a > b; }},
      {"GreaterOrEqual", [](int64_t a, int64_t b) { return a >= b; }}};
  for (const std::vector<int64_t>& shape : {std::vector<int64_t>{7}, {2, 3, 5}, {1, 6, 4, 4}})
    for (const auto& [op, def] : ops)
      for (const bool number_first : {false, true}) {
        int64_t numel = 1;
        for (int64_t d : shape) numel *= d;
        std::vector<int64_t> x(static_cast<size_t>(numel));
        for (int64_t i = 0; i < numel; ++i) x[static_cast<size_t>(i)] = (i * 7) % 11 - 5;  // -5..5, 0 included
        ModelBuilder b(8, 17);
        b.input("x", onnx::TensorProto_DataType_INT64, std::vector<DimSpec>(shape.begin(), shape.end()));
        b.output("y", onnx::TensorProto_DataType_BOOL, std::vector<DimSpec>(shape.begin(), shape.end()));
        b.initializer("k", onnx::TensorProto_DataType_INT64, {})->add_int64_data(0);
        b.node(op, number_first ? std::vector<std::string>{"k", "x"} : std::vector<std::string>{"x", "k"}, {"y"}, "cmp");
        const CompileResult r = compile(b.bytes(), fs::path(), CompileOptions{});
        ASSERT_TRUE(r) << r.error();
        ASSERT_EQ(r.partition.nodes.at(0).op.find(".Scalar") != std::string::npos, true) << r.partition.nodes.at(0).op;
        for (const std::string backend : {"cpu", "vulkan"}) {
          if (backend == "vulkan" && runtime::vulkan_device_name().empty()) continue;
          RunOptions ro;
          ro.backend = backend;
          const RunResult got = vkc::run(r.pte, {Tensor::of(ir::DType::Int64, shape, x)}, ro);
          ASSERT_TRUE(got) << describe(got.diagnostics);
          for (int64_t i = 0; i < numel; ++i) {
            const int64_t v = x[static_cast<size_t>(i)];
            EXPECT_EQ(got.outputs.at(0).get_i(i) != 0, number_first ? def(0, v) : def(v, 0))
                << op << (number_first ? " (number first) " : " ") << backend << " at " << i;
          }
        }
      }
}

// nn.Linear as the dynamo exporter and onnxruntime's fp16 conversion write it: MatMul with a
// constant [K, N] weight, then Add of a constant bias; fp32 and fp16 (Casts around it). Lowered to
// one linear with its bias; checked against the definition computed here.
TEST(VulkanModels, MatMulPlusBiasAsExportersWriteItMatchesTheDefinition) {
  constexpr int64_t kRows = 6, kK = 20, kN = 12;
  const std::vector<float> x = normal(kRows * kK, 3), w = normal(kK * kN, 4), bias = normal(kN, 5);
  for (const bool fp16 : {false, true}) {
    const int32_t t = fp16 ? onnx::TensorProto_DataType_FLOAT16 : onnx::TensorProto_DataType_FLOAT;
    ModelBuilder b(8, 17);
    b.input("x", onnx::TensorProto_DataType_FLOAT, {1, kRows, kK});
    b.output("y", onnx::TensorProto_DataType_FLOAT, {1, kRows, kN});
    auto constant = [&](const char* name, std::vector<int64_t> dims, const std::vector<float>& v) {
      if (!fp16) return (void)b.raw_floats(name, dims, v);
      std::vector<uint16_t> h;
      for (float f : v) h.push_back(ir::float_to_half(f));
      b.initializer(name, t, dims)->set_raw_data(h.data(), h.size() * 2);
    };
    constant("w", {kK, kN}, w);
    constant("bias", {kN}, bias);
    std::string in = "x";
    if (fp16) {
      attr_int(b.node("Cast", {"x"}, {"xh"}, "to_half"), "to", t);
      in = "xh";
    }
    b.node("MatMul", {in, "w"}, {"m"}, "mm");
    b.node("Add", {"m", "bias"}, {fp16 ? "yh" : "y"}, "add");
    if (fp16) attr_int(b.node("Cast", {"yh"}, {"y"}, "to_float"), "to", onnx::TensorProto_DataType_FLOAT);
    const CompileResult r = compile(b.bytes(), fs::path(), CompileOptions{});
    ASSERT_TRUE(r) << r.error();
    size_t linears = 0, adds = 0;
    for (const auto& n : r.partition.nodes) {
      linears += n.op.find("aten.linear.default") != std::string::npos;
      adds += n.op.find("aten.add.Tensor") != std::string::npos;
    }
    EXPECT_EQ(linears, 1u) << (fp16 ? "fp16" : "fp32");
    EXPECT_EQ(adds, 0u) << "the bias is the linear's";
    // The definition, with fp16's rounding of the operands where the model rounds them.
    auto round = [&](float v) { return fp16 ? ir::half_to_float(ir::float_to_half(v)) : v; };
    for (const std::string backend : {"cpu", "vulkan"}) {
      if (backend == "vulkan" && runtime::vulkan_device_name().empty()) continue;
      RunOptions ro;
      ro.backend = backend;
      const RunResult got = vkc::run(r.pte, {Tensor::of(ir::DType::Float32, {1, kRows, kK}, x)}, ro);
      ASSERT_TRUE(got) << describe(got.diagnostics);
      for (int64_t i = 0; i < kRows; ++i)
        for (int64_t j = 0; j < kN; ++j) {
          double want = round(bias[j]);
          for (int64_t k = 0; k < kK; ++k) want += double(round(x[i * kK + k])) * round(w[k * kN + j]);
          EXPECT_NEAR(got.outputs.at(0).get_f(i * kN + j), want, fp16 ? 2e-2 + 4e-3 * std::fabs(want) : 1e-4)
              << backend << (fp16 ? " fp16" : " fp32") << " at " << i << "," << j;
        }
    }
  }
}

// Cast to bool is x != 0 (aten.ne.Scalar): integers and floats, negative, zero and fractional.
TEST(VulkanModels, CastsToBoolMatchTheDefinition) {
  const std::vector<int64_t> shape{2, 3, 5};
  for (const auto& [type, dtype] : {std::pair{onnx::TensorProto_DataType_INT64, ir::DType::Int64},
                                    std::pair{onnx::TensorProto_DataType_FLOAT, ir::DType::Float32}}) {
    ModelBuilder b(8, 17);
    b.input("x", type, std::vector<DimSpec>(shape.begin(), shape.end()));
    b.output("y", onnx::TensorProto_DataType_BOOL, std::vector<DimSpec>(shape.begin(), shape.end()));
    attr_int(b.node("Cast", {"x"}, {"y"}, "cast"), "to", onnx::TensorProto_DataType_BOOL);
    const CompileResult r = compile(b.bytes(), fs::path(), CompileOptions{});
    ASSERT_TRUE(r) << r.error();
    EXPECT_NE(r.partition.nodes.at(0).op.find("aten.ne.Scalar"), std::string::npos) << r.partition.nodes.at(0).op;
    std::vector<double> x(30);
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<double>(static_cast<int64_t>(i * 7 % 5) - 2) * (dtype == ir::DType::Float32 ? 0.25 : 1.0);
    const Tensor input = dtype == ir::DType::Int64
                             ? Tensor::of(dtype, shape, std::vector<int64_t>(x.begin(), x.end()))
                             : Tensor::of(dtype, shape, std::vector<float>(x.begin(), x.end()));
    for (const std::string backend : {"cpu", "vulkan"}) {
      if (backend == "vulkan" && runtime::vulkan_device_name().empty()) continue;
      RunOptions ro;
      ro.backend = backend;
      const RunResult got = vkc::run(r.pte, {input}, ro);
      ASSERT_TRUE(got) << describe(got.diagnostics);
      for (size_t i = 0; i < x.size(); ++i)
        EXPECT_EQ(got.outputs.at(0).get_i(static_cast<int64_t>(i)) != 0, x[i] != 0) << backend << " at " << i;
    }
  }
}

// Reductions over two of the last three dims of a rank-4 tensor in one dispatch (the registry
// keeps the third dim packed, as ET-VK's reduce2d; for a batch of 2 a reduction over C is a chain
// instead): every pair, with and without keepdims, against the definition computed here, on the
// cpu and vulkan backends.
TEST(VulkanModels, TwoDimReductionsMatchTheDefinition) {
  for (const int64_t batch : {1, 2}) {
    const std::vector<int64_t> shape = {batch, 5, 6, 7};
    const int64_t numel = batch * 210;
    const std::vector<float> x = normal(static_cast<size_t>(numel), 11);
    for (const char* op : {"ReduceMean", "ReduceMax", "ReduceSum"}) {
      // Pairs of the last three dims; and axes reaching the batch (N, or C with a batch of 2), which
      // ET-VK reduces only as the middle dim of a 3-D view.
      for (const std::vector<int64_t>& axes :
           {std::vector<int64_t>{2, 3}, {1, 3}, {-3, -2}, {0}, {1}, {0, 2}, {0, 1, 2, 3}}) {
        for (const int keep : {1, 0}) {
          bool reduced[4] = {false, false, false, false};
          for (int64_t a : axes) reduced[a < 0 ? a + 4 : a] = true;
          std::vector<int64_t> out_shape;
          for (int d = 0; d < 4; ++d)
            if (!reduced[d]) out_shape.push_back(shape[d]);
            else if (keep) out_shape.push_back(1);
          ModelBuilder b(8, 18);  // axes as an input (ReduceSum from 13, the others from 18)
          b.input("x", kF32, std::vector<DimSpec>(shape.begin(), shape.end()));
          b.output("y", kF32, std::vector<DimSpec>(out_shape.begin(), out_shape.end()));
          auto* axes_t = b.initializer("axes", onnx::TensorProto_DataType_INT64, {static_cast<int64_t>(axes.size())});
          for (int64_t a : axes) axes_t->add_int64_data(a);
          attr_int(b.node(op, {"x", "axes"}, {"y"}, "reduce"), "keepdims", keep);
          const CompileResult r = compile(b.bytes(), fs::path(), CompileOptions{});
          ASSERT_TRUE(r) << r.error();
          // The definition: over every input element, into the output element it reduces to.
          std::vector<double> want(static_cast<size_t>(numel), 0.0);
          std::vector<int> count(static_cast<size_t>(numel), 0);
          const bool max = std::string(op) == "ReduceMax";
          for (int64_t n = 0; n < batch; ++n)
            for (int64_t c = 0; c < 5; ++c)
              for (int64_t h = 0; h < 6; ++h)
                for (int64_t w = 0; w < 7; ++w) {
                  const int64_t on = reduced[0] ? 0 : n, oc = reduced[1] ? 0 : c, oh = reduced[2] ? 0 : h, ow = reduced[3] ? 0 : w;
                  const auto o = static_cast<size_t>(((on * 5 + oc) * 6 + oh) * 7 + ow);  // kept positions, in order
                  const double v = x[static_cast<size_t>(((n * 5 + c) * 6 + h) * 7 + w)];
                  want[o] = count[o]++ == 0 ? v : max ? std::max(want[o], v) : want[o] + v;
                }
          std::vector<double> expect;
          for (size_t o = 0; o < want.size(); ++o)
            if (count[o]) expect.push_back(std::string(op) == "ReduceMean" ? want[o] / count[o] : want[o]);
          const std::vector<Tensor> in = {Tensor::of(ir::DType::Float32, shape, x)};
          for (const std::string backend : {"cpu", "vulkan"}) {
            if (backend == "vulkan" && runtime::vulkan_device_name().empty()) continue;
            RunOptions ro;
            ro.backend = backend;
            const RunResult got = vkc::run(r.pte, in, ro);
            ASSERT_TRUE(got) << describe(got.diagnostics);
            ASSERT_EQ(got.outputs.at(0).shape, out_shape) << op << " " << backend;
            ASSERT_EQ(static_cast<size_t>(got.outputs[0].numel()), expect.size());
            for (size_t i = 0; i < expect.size(); ++i)
              EXPECT_NEAR(got.outputs[0].get_f(static_cast<int64_t>(i)), expect[i], 1e-4)
                  << op << " axes " << fmt::format("{}", fmt::join(axes, ",")) << " keepdims " << keep << " batch " << batch << " "
                  << backend << " at " << i;
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace vkc::test
