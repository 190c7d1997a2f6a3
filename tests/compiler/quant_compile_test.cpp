// Each --quantize recipe on a small Llama-style block: operators, families, sizes, the report,
// and the constants exactly as the runtime reads them.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <iterator>

#include "llama_test_model.h"
#include "quant/int_quant.h"
#include "vkc/compiler/driver.h"
#include "vkc/compiler/inspect.h"
#include "vkc/compiler/inspect_gates.h"
#include "vkc/ir/op_families.h"
#include "vkc/runtime/vulkan.h"
#include "vkc/vkc.h"

namespace vkc::test {
namespace {

using M = LlamaTestModel;
namespace quant = passes::quant;

struct Compiled {
  compiler::CompileStats stats;
  compiler::InspectReport inspect;
  const passes::QuantLayerReport& layer(const std::string& node) const {
    for (const auto& l : stats.quantized_layers)
      if (l.node == node) return l;
    throw std::runtime_error("no report for " + node);
  }
  const ir::Node* node(const std::string& name) const {
    for (const ir::Node* n : stats.graph->nodes())
      if (n->name() == name) return n;
    throw std::runtime_error("no node " + name);
  }
  size_t ops(const std::string& op) const {
    const auto& ops = inspect.delegates.at(0).ops;
    auto it = ops.find(op);
    return it == ops.end() ? 0 : it->second;
  }
};

Compiled compile(const TempDir& dir, const M& m, const std::string& recipe, std::vector<std::string> exclude = {}) {
  compiler::CompileConfig c;
  c.quantize = recipe;
  c.quantize_exclude = std::move(exclude);
  const fs::path out = dir / ("m-" + (recipe.empty() ? std::string("fp") : recipe) + ".pte");
  Compiled r{compiler::compile_file(m.path, out, c), compiler::inspect_file(out)};
  return r;
}

template <typename T>
std::vector<T> constant(const ir::Value* v) {
  std::vector<T> out(v->data().size() / sizeof(T));
  std::memcpy(out.data(), v->data().data(), v->data().size());
  return out;
}

TEST(QuantCompile, Int8DynamicActivationInt4Weights) {
  TempDir dir;
  const M m = M::write(dir.path());
  const Compiled fp = compile(dir, m, "");
  const Compiled q = compile(dir, m, "8da4w:64");
  EXPECT_EQ(q.ops("et_vk.linear_dq8ca_q4gsw.default"), 4u);  // w1, w3, w2, output
  EXPECT_EQ(q.ops("aten.linear.default"), 1u);               // tiny
  // w1 and w3 read the same activation: one choose_qparams for both; w2 and output one each.
  EXPECT_EQ(q.ops("torchao.choose_qparams_affine.default"), 3u);
  EXPECT_EQ(q.inspect.delegates.at(0).families.count("quantized-linear"), 1u);
  EXPECT_LT(q.inspect.file_size * 2, fp.inspect.file_size);
  EXPECT_FALSE(q.layer("tiny").quantized);
  EXPECT_NE(q.layer("tiny").reason.find("tiny layers stay fp"), std::string::npos);

  // feed_forward.w2: weight [N=128, K=256] as [N, K/2] u8, scales [G=4, N], sums i32 [G, N] (N % 8 == 0).
  const ir::Node* n = q.node("feed_forward.w2");
  ASSERT_EQ(n->op_type(), "et_vk.linear_dq8ca_q4gsw.default");
  EXPECT_EQ(std::get<int64_t>(*n->attr("group_size")), 64);
  const auto want = quant::quantize_int4_grouped(m.linear_nk("w2", true, 256, 128).data(), 128, 256, 64);
  EXPECT_EQ(n->input(3)->shape().sizes(), (std::vector<int64_t>{128, 128}));
  EXPECT_EQ(constant<uint8_t>(n->input(3)), want.packed);
  EXPECT_EQ(n->input(5)->shape().sizes(), (std::vector<int64_t>{4, 128}));
  EXPECT_EQ(constant<float>(n->input(5)), quant::transpose_padded<float>(want.scales, 128, 4, 4));
  EXPECT_EQ(n->input(4)->dtype(), ir::DType::Int32);
  EXPECT_EQ(constant<int32_t>(n->input(4)), quant::transpose_padded<int32_t>(want.group_sums, 128, 4, 8));
  const ir::Node* qp = n->input(1)->producer();
  ASSERT_TRUE(qp);
  EXPECT_EQ(qp->op_type(), "torchao.choose_qparams_affine.default");
  EXPECT_EQ(std::get<std::vector<int64_t>>(*qp->attr("block_size")), (std::vector<int64_t>{1, 256}));
  EXPECT_EQ(n->input(2)->dtype(), ir::DType::Int8);
  const auto& rep = q.layer("feed_forward.w2");
  EXPECT_EQ(rep.bits, 4);
  EXPECT_EQ(rep.bytes_before, 128u * 256 * 4);
  EXPECT_EQ(rep.bytes_after, 128u * 128 + 4 * 128 * 4 + 4 * 128 * 4);
  EXPECT_GT(rep.sqnr_db, 18.5);
}

TEST(QuantCompile, WeightOnlyRecipes) {
  TempDir dir;
  const M m = M::write(dir.path());
  const Compiled q4 = compile(dir, m, "int4-weight-only:128");
  EXPECT_EQ(q4.ops("et_vk.linear_q4gsw.default"), 4u);
  EXPECT_EQ(q4.ops("torchao.choose_qparams_affine.default"), 0u);
  const ir::Node* out = q4.node("output");
  EXPECT_EQ(out->input(3), nullptr);  // Gemm without C: no bias
  const auto want = quant::quantize_int4_grouped(m.weight("output.weight").data(), 256, 128, 128);
  EXPECT_EQ(constant<uint8_t>(out->input(1)), want.packed);
  EXPECT_EQ(out->input(2)->shape().sizes(), (std::vector<int64_t>{1, 256}));  // scales [G, N]

  const Compiled q8 = compile(dir, m, "int8-weight-only");
  EXPECT_EQ(q8.ops("aten._weight_int8pack_mm.default"), 4u);
  EXPECT_EQ(q8.layer("feed_forward.w1").bits, 8);
  EXPECT_EQ(q8.layer("feed_forward.w1").group_size, 0);
  EXPECT_GT(q8.layer("feed_forward.w1").sqnr_db, 38.0);
}

TEST(QuantCompile, EmbeddingAndFp16Suffixes) {
  TempDir dir;
  const M m = M::write(dir.path());
  const Compiled q = compile(dir, m, "8da4w-fp16-embedding");
  EXPECT_EQ(q.ops("et_vk.embedding_q4gsw.default"), 1u);
  EXPECT_EQ(q.ops("aten.embedding.default"), 0u);
  EXPECT_EQ(q.inspect.delegates.at(0).options.force_fp16, std::optional<bool>(true));
  const ir::Node* e = q.node("embed");
  EXPECT_EQ(std::get<int64_t>(*e->attr("group_size")), 32);
  EXPECT_TRUE(std::get<bool>(*e->attr("is_linear_weight")));
  const auto want = quant::quantize_int4_grouped(m.weight("tok_embeddings.weight").data(), 256, 128, 32);
  EXPECT_EQ(constant<uint8_t>(e->input(0)), want.packed);
  EXPECT_EQ(constant<float>(e->input(1)), want.scales);  // [V, G], not transposed
  compiler::InspectGates gates = compiler::make_gates({"VulkanBackend"}, {"quantized-linear,embedding"}, "1MiB");
  EXPECT_TRUE(compiler::check_gates(q.inspect, gates).empty());
  gates = compiler::make_gates({}, {"sdpa"}, "64KiB");
  const auto failed = compiler::check_gates(q.inspect, gates);
  ASSERT_EQ(failed.size(), 2u);
  EXPECT_EQ(failed[0], "missing family 'sdpa'");
  EXPECT_EQ(failed[1].rfind("size ", 0), 0u);
}

TEST(QuantCompile, SelectionRules) {
  TempDir dir;
  const M m = M::write(dir.path());
  // K = 128 is not a multiple of 256: w1 is quantized with its K padded to 256 (zero weight columns
  // and an activation padded with zeros, as torchao pads); w2 (K = 256) as it is. The globs keep w2 and
  // output fp.
  const Compiled q = compile(dir, m, "int4-weight-only:256");
  EXPECT_TRUE(q.layer("feed_forward.w2").quantized);
  EXPECT_EQ(q.layer("feed_forward.w2").padded_cols, 0);
  ASSERT_TRUE(q.layer("feed_forward.w1").quantized);
  EXPECT_EQ(q.layer("feed_forward.w1").padded_cols, 256);
  const ir::Node* w1 = q.node("feed_forward.w1");
  const ir::Node* pad = w1->input(0)->producer();
  ASSERT_TRUE(pad);
  EXPECT_EQ(pad->op_type(), "aten.constant_pad_nd.default");
  EXPECT_EQ(std::get<std::vector<int64_t>>(*pad->attr("pad")), (std::vector<int64_t>{0, 128}));
  EXPECT_EQ(q.node("feed_forward.w3")->input(0), w1->input(0)) << "w1 and w3 share one padded activation";
  std::vector<float> padded(static_cast<size_t>(q.layer("feed_forward.w1").rows) * 256, 0.f);
  {
    const auto w = m.linear_nk("w1", true, 128, q.layer("feed_forward.w1").rows);  // [N, K]
    for (int64_t r = 0; r < q.layer("feed_forward.w1").rows; ++r)
      std::memcpy(&padded[size_t(r) * 256], &w[size_t(r) * 128], 128 * sizeof(float));
  }
  const auto want = quant::quantize_int4_grouped(padded.data(), q.layer("feed_forward.w1").rows, 256, 256);
  EXPECT_EQ(constant<uint8_t>(w1->input(1)), want.packed);
  const Compiled ex = compile(dir, m, "8da4w", {"feed_forward.w2", "output.*"});
  EXPECT_FALSE(ex.layer("feed_forward.w2").quantized);
  EXPECT_EQ(ex.layer("feed_forward.w2").reason, "excluded by --quantize-exclude 'feed_forward.w2'");
  EXPECT_FALSE(ex.layer("output").quantized);  // matched on the weight name output.weight
  EXPECT_TRUE(ex.layer("feed_forward.w1").quantized);
  EXPECT_THROW(compile(dir, m, "8da4w:100"), compiler::CompileError);
}

// com.microsoft MatMulNBits, K = 64, N = 32, block 32: symmetric blocks reuse B's bytes as they are.
fs::path matmul_nbits_model(const TempDir& dir, bool zero_points, uint8_t zp_value) {
  ModelBuilder b(8, 17);
  b.import_opset("com.microsoft", 1);
  b.input("x", kF32, {1, 4, 64});
  b.output("y", kF32, {1, 4, 32});
  std::vector<uint8_t> w(32 * 2 * 16);
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<uint8_t>(i * 37 + 11);
  b.initializer("B", onnx::TensorProto_DataType_UINT8, {32, 2, 16})->set_raw_data(w.data(), w.size());
  std::vector<float> scales(64);
  for (size_t i = 0; i < scales.size(); ++i) scales[i] = 0.01f * static_cast<float>(i + 1);
  b.raw_floats("scales", {64}, scales);
  std::vector<std::string> inputs = {"x", "B", "scales"};
  if (zero_points) {
    const std::vector<uint8_t> zp(32, static_cast<uint8_t>(zp_value | zp_value << 4));
    b.initializer("zp", onnx::TensorProto_DataType_UINT8, {32})->set_raw_data(zp.data(), zp.size());
    inputs.push_back("zp");
  }
  auto* n = b.node("MatMulNBits", inputs, {"y"}, "mnb", "com.microsoft");
  attr_int(n, "K", 64);
  attr_int(n, "N", 32);
  attr_int(n, "bits", 4);
  attr_int(n, "block_size", 32);
  return b.save(dir / "mnb.onnx");
}

TEST(PreQuantized, MatMulNBitsSymmetricBlocksBecomeLinearQ4gsw) {
  TempDir dir;
  for (bool with_zp : {false, true}) {
    const fs::path model = matmul_nbits_model(dir, with_zp, 8);
    const auto stats = compiler::compile_file(model, dir / "mnb.pte", {});
    const ir::Node* n = stats.graph->nodes().front();
    ASSERT_EQ(n->op_type(), "et_vk.linear_q4gsw.default");
    EXPECT_EQ(std::get<int64_t>(*n->attr("group_size")), 32);
    const auto w = constant<uint8_t>(n->input(1));
    ASSERT_EQ(w.size(), 32u * 32);
    EXPECT_EQ(w[5], static_cast<uint8_t>(5 * 37 + 11));
    EXPECT_EQ(n->input(1)->shape().sizes(), (std::vector<int64_t>{32, 32}));
    const auto s = constant<float>(n->input(2));  // [blocks=2, N=32]: s[b][n] = scales[n * 2 + b]
    EXPECT_FLOAT_EQ(s[1 * 32 + 3], 0.01f * (3 * 2 + 1 + 1));
  }
}

// MatMulNBits in every form onnxruntime's quantizer writes (zero points, a padded last block, 8 bits)
// against W[n, k] = s[n, k / block] * (q[n, k] - z[n, k / block]) computed here in integers and
// doubles, on cpu and (where present) Vulkan.
struct NBitsCase {
  int64_t bits, K, block;
  bool zero_points;
};

TEST(PreQuantized, MatMulNBitsComputesItsDefinitionExactly) {
  const int64_t N = 12, M = 3;
  for (const NBitsCase c : {NBitsCase{4, 64, 32, true}, NBitsCase{4, 40, 32, true}, NBitsCase{4, 40, 16, false},
                            NBitsCase{8, 64, 32, true}, NBitsCase{8, 48, 32, false}}) {
    SCOPED_TRACE(fmt::format("bits {} K {} block {} zp {}", c.bits, c.K, c.block, c.zero_points));
    TempDir dir;
    const int64_t blocks = (c.K + c.block - 1) / c.block, row = blocks * c.block * c.bits / 8;
    std::vector<int> q(static_cast<size_t>(N * blocks * c.block)), z(static_cast<size_t>(N * blocks));
    std::vector<float> s(static_cast<size_t>(N * blocks)), x(static_cast<size_t>(M * c.K));
    const int levels = 1 << c.bits;
    for (size_t i = 0; i < q.size(); ++i) q[i] = static_cast<int>((i * 37 + 11) % levels);
    for (size_t i = 0; i < z.size(); ++i) z[i] = c.zero_points ? static_cast<int>((i * 5 + 3) % levels) : levels / 2;
    for (size_t i = 0; i < s.size(); ++i) s[i] = 0.01f * static_cast<float>(i % 7 + 1);
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(static_cast<int>(i * 13 % 17) - 8) / 8.0f;
    std::vector<uint8_t> B(static_cast<size_t>(N * row), 0), zp;
    for (int64_t n = 0; n < N; ++n)
      for (int64_t k = 0; k < blocks * c.block; ++k) {
        const int v = q[n * blocks * c.block + k];
        if (c.bits == 8) B[n * row + k] = static_cast<uint8_t>(v);
        else B[n * row + k / 2] |= static_cast<uint8_t>(k % 2 ? v << 4 : v);
      }
    ModelBuilder b(8, 17);
    b.import_opset("com.microsoft", 1);
    b.input("x", kF32, {1, M, c.K});
    b.output("y", kF32, {1, M, N});
    b.initializer("B", onnx::TensorProto_DataType_UINT8, {N, blocks, row / blocks})->set_raw_data(B.data(), B.size());
    b.raw_floats("scales", {N * blocks}, s);
    std::vector<std::string> inputs = {"x", "B", "scales"};
    if (c.zero_points) {
      const int64_t zrow = (blocks * c.bits + 7) / 8;
      zp.assign(static_cast<size_t>(N * zrow), 0);
      for (int64_t n = 0; n < N; ++n)
        for (int64_t k = 0; k < blocks; ++k) {
          const int v = z[n * blocks + k];
          if (c.bits == 8) zp[n * zrow + k] = static_cast<uint8_t>(v);
          else zp[n * zrow + k / 2] |= static_cast<uint8_t>(k % 2 ? v << 4 : v);
        }
      b.initializer("zp", onnx::TensorProto_DataType_UINT8, {N * zrow})->set_raw_data(zp.data(), zp.size());
      inputs.push_back("zp");
    }
    auto* node = b.node("MatMulNBits", inputs, {"y"}, "mnb", "com.microsoft");
    attr_int(node, "K", c.K);
    attr_int(node, "N", N);
    attr_int(node, "bits", c.bits);
    attr_int(node, "block_size", c.block);
    const fs::path model = b.save(dir / "mnb.onnx");
    std::vector<double> want(static_cast<size_t>(M * N), 0.0);
    for (int64_t m = 0; m < M; ++m)
      for (int64_t n = 0; n < N; ++n)
        for (int64_t k = 0; k < c.K; ++k) {
          const int64_t g = n * blocks + k / c.block;
          want[m * N + n] += x[m * c.K + k] * static_cast<double>(s[g]) * (q[n * blocks * c.block + k] - z[g]);
        }
    const CompileResult r = compile(model, CompileOptions{});
    ASSERT_TRUE(r.ok) << r.error();
    for (const std::string backend : {"cpu", "vulkan"}) {
      if (backend == "vulkan" && runtime::vulkan_device_name().empty()) continue;
      RunOptions ro;
      ro.backend = backend;
      const RunResult out = run(std::span<const uint8_t>(r.pte), {Tensor::of(ir::DType::Float32, {1, M, c.K}, x)}, ro);
      ASSERT_TRUE(out.ok) << backend;
      for (size_t i = 0; i < want.size(); ++i)
        EXPECT_NEAR(out.outputs.at(0).get_f(static_cast<int64_t>(i)), want[i], 1e-4 + 1e-4 * std::abs(want[i]))
            << backend << " element " << i;
    }
  }
}

// A linear whose K (40) is not a multiple of the group size (32) is quantized with K padded to 64,
// as torchao pads: its program computes exactly what the same recipe makes of the model padded by
// hand (the input Pad-ed with zeros, the weight given 24 zero rows), on cpu and (where present)
// Vulkan, for int4-weight-only and 8da4w; and it is near the fp32 result.
TEST(QuantCompile, LinearsWhoseKIsNotAGroupMultipleArePaddedAsTorchaoPads) {
  const int64_t M = 3, K = 40, Kp = 64, N = 16;
  std::vector<float> w(static_cast<size_t>(K * N)), x(static_cast<size_t>(M * K));
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(static_cast<int>(i * 29 % 23) - 11) / 16.0f;
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(static_cast<int>(i * 13 % 17) - 8) / 8.0f;
  TempDir dir;
  const auto model = [&](bool by_hand) {
    ModelBuilder b(8, 17);
    b.input("x", kF32, {1, M, K});
    b.output("y", kF32, {1, M, N});
    if (!by_hand) {
      b.raw_floats("w", {K, N}, w);
      b.node("MatMul", {"x", "w"}, {"y"}, "linear");
    } else {
      std::vector<float> wp(static_cast<size_t>(Kp * N), 0.f);
      std::copy(w.begin(), w.end(), wp.begin());  // [K, N] rows, then zero rows
      b.raw_floats("w", {Kp, N}, wp);
      auto* pads = b.initializer("pads", onnx::TensorProto_DataType_INT64, {6});
      for (int64_t v : std::vector<int64_t>{0, 0, 0, 0, 0, Kp - K}) pads->add_int64_data(v);
      b.node("Pad", {"x", "pads"}, {"xp"}, "pad");
      b.node("MatMul", {"xp", "w"}, {"y"}, "linear");
    }
    return b.save(dir / (by_hand ? "by_hand.onnx" : "plain.onnx"));
  };
  const fs::path plain = model(false), by_hand = model(true);
  std::vector<double> fp(static_cast<size_t>(M * N), 0.0);
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n)
      for (int64_t k = 0; k < K; ++k) fp[m * N + n] += double(x[m * K + k]) * w[k * N + n];
  double fp_max = 0;
  for (double v : fp) fp_max = std::max(fp_max, std::abs(v));
  for (const std::string recipe : {"int4-weight-only:32", "8da4w:32"}) {
    SCOPED_TRACE(recipe);
    CompileOptions o;
    o.quantization_recipe = recipe;
    o.quantize_min_elements = 0;
    const CompileResult a = compile(plain, o), b = compile(by_hand, o);
    ASSERT_TRUE(a.ok) << a.error();
    ASSERT_TRUE(b.ok) << b.error();
    EXPECT_NE(a.quant_report.find("\"padded_k\": 64"), std::string::npos) << a.quant_report;
    EXPECT_EQ(a.quant_report.find("\"quantized\": false"), std::string::npos) << a.quant_report;
    for (const std::string backend : {"cpu", "vulkan"}) {
      if (backend == "vulkan" && runtime::vulkan_device_name().empty()) continue;
      RunOptions ro;
      ro.backend = backend;
      const Tensor in = Tensor::of(ir::DType::Float32, {1, M, K}, x);
      const RunResult ya = run(std::span<const uint8_t>(a.pte), {in}, ro), yb = run(std::span<const uint8_t>(b.pte), {in}, ro);
      ASSERT_TRUE(ya.ok && yb.ok) << backend;
      for (int64_t i = 0; i < M * N; ++i) {
        EXPECT_NEAR(ya.outputs.at(0).get_f(i), yb.outputs.at(0).get_f(i), 1e-5) << backend << " element " << i;
        EXPECT_NEAR(ya.outputs.at(0).get_f(i), fp[i], 0.1 * fp_max) << backend << " element " << i;  // 4-bit error
      }
    }
  }
}

TEST(PreQuantized, MatMulNBitsWithReorderingGroupIndexIsReportedNotMiscompiled) {
  TempDir dir;
  ModelBuilder b(8, 17);
  b.import_opset("com.microsoft", 1);
  b.input("x", kF32, {1, 4, 64});
  b.output("y", kF32, {1, 4, 32});
  std::vector<uint8_t> w(32 * 2 * 16, 0x88);
  b.initializer("B", onnx::TensorProto_DataType_UINT8, {32, 2, 16})->set_raw_data(w.data(), w.size());
  b.raw_floats("scales", {64}, std::vector<float>(64, 0.5f));
  std::vector<int32_t> g_idx(64);
  for (size_t k = 0; k < g_idx.size(); ++k) g_idx[k] = static_cast<int32_t>(k % 2);  // act-order groups
  b.initializer("g_idx", onnx::TensorProto_DataType_INT32, {64})->set_raw_data(g_idx.data(), g_idx.size() * 4);
  auto* n = b.node("MatMulNBits", {"x", "B", "scales", "", "g_idx"}, {"y"}, "mnb", "com.microsoft");
  attr_int(n, "K", 64);
  attr_int(n, "N", 32);
  attr_int(n, "bits", 4);
  attr_int(n, "block_size", 32);
  const fs::path model = b.save(dir / "mnb.onnx");
  try {
    compiler::compile_file(model, dir / "mnb.pte", {});
    FAIL() << "compiled";
  } catch (const compiler::CompileError& e) {
    EXPECT_NE(std::string(e.what()).find("g_idx reorders groups"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(dir / "mnb.pte"));
}

TEST(OpFamilies, EveryRegistryFamilyIsDescribedAndQuantizedFamiliesMeetTheirFloatOnes) {
  for (const ir::FamilyInfo& f : ir::op_families()) EXPECT_FALSE(f.description.empty()) << f.name;
  EXPECT_TRUE(ir::family_meets("quantized-embedding", "embedding"));
  EXPECT_TRUE(ir::family_meets("quantized-linear", "linear"));
  EXPECT_TRUE(ir::family_meets("convolution", "conv"));
  EXPECT_FALSE(ir::family_meets("linear", "quantized-linear"));
  EXPECT_EQ(compiler::parse_size("770MiB"), 770ull << 20);
  EXPECT_EQ(compiler::parse_size("1.5GB"), 1500000000ull);
  EXPECT_THROW(compiler::parse_size("12 parsecs"), std::invalid_argument);
}

}  // namespace
}  // namespace vkc::test

namespace vkc::test {
namespace {

// A real dynamo export with tied input/output embeddings (Qwen3; the exporter stores the output
// projection as a transposed copy of the table).
const fs::path kTiedModel = fs::path(VKC_SOURCE_DIR) / "tests/models/decoders/qwen3/qwen3_step_dynamo/model.onnx";

const ir::Node* find_op(const compiler::CompileStats& s, const std::string& op) {
  for (const ir::Node* n : s.graph->nodes())
    if (n->op_type() == op) return n;
  return nullptr;
}

// `recipe` on every linear of the tied model's KV-cache program.
compiler::CompileConfig every_linear(const std::string& recipe) {
  compiler::CompileConfig c;
  c.quantize = recipe;
  c.quantize_min_elements = 0;
  c.max_seq_len = 16;
  return c;
}

TEST(QuantCompile, TiedEmbeddingAndOutputProjectionShareOnePackedTable) {
  TempDir dir;
  const compiler::CompileConfig c = every_linear("8da4w:32-embedding");
  const auto s = compiler::compile_file(kTiedModel, dir / "q.pte", c);
  const ir::Node* emb = find_op(s, "et_vk.embedding_q4gsw.default");
  ASSERT_NE(emb, nullptr);
  EXPECT_EQ(std::get<int64_t>(*emb->attr("group_size")), 32);  // the linears' group, not the embedding default
  const ir::Node* head = nullptr;
  for (const ir::Node* n : s.graph->nodes())
    if ((n->op_type() == "et_vk.linear_dq8ca_q4gsw.default" && n->input(3)->shape() == emb->input(0)->shape()) ||
        (n->op_type() == "et_vk.linear_q4gsw.default" && n->input(1)->shape() == emb->input(0)->shape()))
      head = n;
  ASSERT_NE(head, nullptr) << "no quantized output projection of the table's shape";
  const ir::Value* packed = head->op_type() == "et_vk.linear_q4gsw.default" ? head->input(1) : head->input(3);
  ASSERT_EQ(packed->data().size(), emb->input(0)->data().size());
  EXPECT_EQ(std::memcmp(packed->data().data(), emb->input(0)->data().data(), packed->data().size()), 0)
      << "tied weights packed differently: the program would store the table twice";
  // (Named data is keyed by content, so the program holds the packed table once.)
}

// A compile that keeps no packed int4 bytes in memory (every packed weight a derived constant,
// quantized again when hashed and written) writes the same file as one that keeps them all: tied
// tables (one stored copy), an embedding, MatMul-form weights, with 4-bit and 8da4w recipes, and a
// K padded to the group size.
TEST(QuantCompile, PackedWeightsMadeWhenWrittenAreTheSameBytes) {
  TempDir dir;
  auto bytes = [](const fs::path& p) {
    std::ifstream f(p, std::ios::binary);
    return std::vector<char>(std::istreambuf_iterator<char>(f), {});
  };
  // Group 256 pads every K of this small model.
  for (const std::string recipe : {"8da4w:32-embedding", "int4-weight-only:32-fp16-embedding", "8da4w:256"}) {
    SCOPED_TRACE(recipe);
    compiler::CompileConfig kept = every_linear(recipe), made = kept;
    made.quantize_kept_packed_bytes = 0;
    (void)compiler::compile_file(kTiedModel, dir / "kept.pte", kept);
    const auto b = compiler::compile_file(kTiedModel, dir / "made.pte", made);
    size_t quantized = 0, padded = 0;
    for (const auto& l : b.quantized_layers) quantized += l.quantized, padded += l.padded_cols > l.cols;
    EXPECT_GT(quantized, 0u);
    if (recipe == "8da4w:256") {
      EXPECT_GT(padded, 0u);
    }
    const std::vector<char> a_bytes = bytes(dir / "kept.pte"), b_bytes = bytes(dir / "made.pte");
    ASSERT_FALSE(a_bytes.empty());
    EXPECT_TRUE(a_bytes == b_bytes);
  }
}

TEST(QuantCompile, DynamicActivationLinearWiderThanATextureKeepsInt4WeightsOnly) {
  TempDir dir;
  compiler::CompileConfig c = every_linear("8da4w:32");
  c.options.texture_limits = serializer::TextureLimits{32, 2048, 2048};  // 128 floats per texture row
  const auto s = compiler::compile_file(kTiedModel, dir / "q.pte", c);
  for (const auto& l : s.quantized_layers) {
    if (!l.quantized) continue;
    const bool wide = (l.rows + 3) / 4 > 32 || (l.cols + 3) / 4 > 32;
    EXPECT_EQ(l.op, wide ? "et_vk.linear_q4gsw.default" : "et_vk.linear_dq8ca_q4gsw.default") << l.node;
  }
}

}  // namespace
}  // namespace vkc::test
