// Real quantizer output: tests/models/export_quantized.py ran onnxruntime 1.30's own quantizers on
// the tiny decoder exports (tests/models/quantized/, with onnxruntime's outputs beside each):
// MatMulNBits (4 bits symmetric and with zero points, a padded last block, 8 bits) and
// quantize_dynamic (MatMulInteger chains, a uint8 embedding table read by Gather + DequantizeLinear).
// Each compiles fully delegated and computes onnxruntime's numbers: within 1e-3 relative and at
// least 60 dB SQNR against onnxruntime's own quantized result, on cpu and (where present) Vulkan.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "export_test_util.h"

namespace vkc::test {
namespace {

const fs::path kDir = corpus("quantized");

double sqnr_db(const Tensor& got, const Tensor& want) {
  double signal = 0, noise = 0;
  for (int64_t i = 0; i < want.numel(); ++i) {
    const double w = want.get_f(i), e = got.get_f(i) - w;
    signal += w * w;
    noise += e * e;
  }
  return noise == 0 ? 200.0 : 10.0 * std::log10(signal / noise);
}

// The symbolic dims fixed to a data set's: `past` for decode steps, `sequence` for full sequences.
CompileOptions options_for(const std::string& name, const std::vector<Tensor>& inputs, CompileOptions o = {}) {
  if (name.find("_step_") != std::string::npos) o.dims["past"] = inputs.at(2).shape.at(2);
  else o.dims["sequence"] = inputs.at(0).shape.at(1);
  return o;
}

void expect_matches_onnxruntime(const std::string& name, const CompileOptions& o) {
  const fs::path dir = kDir / name;
  for (int set = 0; fs::exists(dir / ("test_data_set_" + std::to_string(set))); ++set) {
    const fs::path d = dir / ("test_data_set_" + std::to_string(set));
    const auto inputs = read_set(d, "input"), want = read_set(d, "output");
    const CompileResult r = compile(dir / "model.onnx", options_for(name, inputs, o));
    ASSERT_TRUE(r.ok) << name << ": " << diags(r.diagnostics);
    (void)ops_of(r);  // every node delegated
    for (const std::string& b : backends()) {
      const auto got = run_pte(r.pte, inputs, b);
      expect_close(got, want, name + " set " + std::to_string(set) + " on " + b);
      for (size_t i = 0; i < got.size() && i < want.size(); ++i)
        EXPECT_GE(sqnr_db(got[i], want[i]), 60.0) << name << " output " << i << " on " << b;
    }
  }
}

std::vector<std::string> variants(const std::string& kind) { return subfolders(kDir, kind); }

TEST(QuantizedExports, MatMulNBitsComputesOnnxruntimesNumbers) {
  const auto names = variants("_nbits");
  ASSERT_GE(names.size(), 9u);
  for (const std::string& name : names) {
    SCOPED_TRACE(name);
    const auto inputs = read_set(kDir / name / "test_data_set_0", "input");
    const CompileOptions o = options_for(name, inputs);
    const CompileResult r = compile(kDir / name / "model.onnx", o);
    ASSERT_TRUE(r.ok) << diags(r.diagnostics);
    const auto ops = ops_of(r);
    const bool four = name.find("nbits4") != std::string::npos;
    // 4 bits run on the runtime's 4-bit linear; 8 bits are dequantized (no 8-bit group-wise linear).
    EXPECT_EQ(ops.count("vk.et_vk.linear_q4gsw.default"), four ? 1u : 0u);
    // A K of 64 under blocks of 128: the activation is padded to the quantizer's padded K.
    EXPECT_EQ(ops.count("vk.aten.constant_pad_nd.default"), name.find("b128") != std::string::npos ? 1u : 0u);
    // The imported layers are reported: source, bits, block, zero points.
    const auto report = nlohmann::json::parse(r.quant_report);
    size_t imported = 0;
    for (const auto& l : report.at("layers")) {
      if (l.at("source") != "MatMulNBits") continue;
      ++imported;
      EXPECT_EQ(l.at("bits"), four ? 4 : 8);
      EXPECT_EQ(l.at("group_size"), name.find("b128") != std::string::npos ? 128 : 32);
      EXPECT_EQ(l.at("zero_points").get<bool>(), name.find("asym") != std::string::npos);
    }
    EXPECT_GE(imported, 14u);
    expect_matches_onnxruntime(name, o);
  }
}

TEST(QuantizedExports, ImportedLayersStayAsTheyAreUnderARecipe) {
  // A --quantize recipe quantizes float layers only: the zero-point terms stay fp32, so the
  // imported model still computes onnxruntime's numbers.
  const std::string name = "llama_seq_dynamo_nbits4_asym_b32";
  CompileOptions o = options_for(name, read_set(kDir / name / "test_data_set_0", "input"));
  o.quantization_recipe = "8da4w:32";
  o.quantize_min_elements = 0;
  expect_matches_onnxruntime(name, o);
}

TEST(QuantizedExports, DynamicInt8WithQuantizedEmbeddingComputesOnnxruntimesNumbers) {
  const auto names = variants("_dynamic_int8");
  ASSERT_GE(names.size(), 3u);
  for (const std::string& name : names) {
    SCOPED_TRACE(name);
    const CompileOptions o = options_for(name, read_set(kDir / name / "test_data_set_0", "input"));
    const CompileResult r = compile(kDir / name / "model.onnx", o);
    ASSERT_TRUE(r.ok) << diags(r.diagnostics);
    // The uint8 table became an embedding of dequantized rows.
    EXPECT_TRUE(ops_of(r).count("vk.aten.embedding.default"));
    expect_matches_onnxruntime(name, o);
  }
}

// onnxruntime's quantize_static (QDQ, per-channel int8) of a small CNN: activations stay int8 between
// ET-VK's q8ta operators, the program has about the fp32 graph's operator count, and it computes
// onnxruntime's own int8 result.
TEST(QuantizedExports, StaticInt8CnnRunsOnInt8OperatorsWithTheFp32OperatorCount) {
  const CompileResult fp32 = compile(kDir / "cnn_fp32/model.onnx", CompileOptions{});
  ASSERT_TRUE(fp32.ok) << diags(fp32.diagnostics);
  const CompileResult r = compile(kDir / "cnn_qdq_int8/model.onnx", CompileOptions{});
  ASSERT_TRUE(r.ok) << diags(r.diagnostics);
  const auto ops = ops_of(r);
  for (const char* op : {"vk.et_vk.q8ta_conv2d.default", "vk.et_vk.q8ta_conv2d_dw.default",
                         "vk.et_vk.q8ta_conv2d_pw.default", "vk.et_vk.q8ta_add.default",
                         "vk.et_vk.q8ta_linear_gemv.default", "vk.quantized_decomposed.quantize_per_tensor.default",
                         "vk.quantized_decomposed.dequantize_per_tensor.default"})
    EXPECT_TRUE(ops.count(op)) << op;
  EXPECT_FALSE(ops.count("vk.aten.round.default"));
  // Two boundaries more than fp32 (the input and the pooled features are quantized).
  EXPECT_LE(r.partition.nodes.size(), fp32.partition.nodes.size() + 2);
  // --quant-report: every conv and the linear, imported from QDQ, with the operator each became.
  size_t fused = 0;
  const auto report = nlohmann::json::parse(r.quant_report);
  for (const auto& l : report.at("layers")) {
    EXPECT_EQ(l.at("source"), "QDQ");
    EXPECT_TRUE(l.at("quantized").get<bool>()) << l.dump();
    EXPECT_EQ(l.at("op").get<std::string>().rfind("et_vk.q8ta_", 0), 0u) << l.dump();
    ++fused;
  }
  EXPECT_EQ(fused, 7u);
  for (int set = 0; set < 2; ++set) {
    const fs::path d = kDir / "cnn_qdq_int8" / ("test_data_set_" + std::to_string(set));
    const auto inputs = read_set(d, "input"), want = read_set(d, "output");
    for (const std::string& b : backends()) {
      const auto got = run_pte(r.pte, inputs, b);
      ASSERT_EQ(got.size(), 1u);
      EXPECT_GE(sqnr_db(got[0], want[0]), 35.0) << "set " << set << " on " << b;
    }
  }
}

// onnxruntime's quantize_static (defaults: uint8 activations) of a SqueezeNet-style fire module:
// its concat and max pools are quantized in and out with the same parameters. The Q -> DQ round
// trips lower-q8ta leaves before the pools are dropped (drop-requantized-qdq), so no float fake
// quantization is left, and the program computes onnxruntime's result. (ORT 1.30 writes the bias
// scales as [1] with scalar zero points, which the importer takes.)
TEST(QuantizedExports, FireModuleKeepsNoFakeQuantizationAroundItsPools) {
  const CompileResult r = compile(kDir / "fire_qdq_uint8/model.onnx", CompileOptions{});
  ASSERT_TRUE(r.ok) << diags(r.diagnostics);
  const auto ops = ops_of(r);
  EXPECT_TRUE(ops.count("vk.et_vk.q8ta_conv2d.default"));
  EXPECT_TRUE(ops.count("vk.et_vk.q8ta_conv2d_pw.default"));
  EXPECT_TRUE(ops.count("vk.aten.max_pool2d_with_indices.default"));
  EXPECT_FALSE(ops.count("vk.aten.round.default"));
  size_t dropped = 0;
  const auto report = nlohmann::json::parse(r.quant_report);
  for (const auto& l : report.at("layers")) dropped += l.at("op") == "none (drop-requantized-qdq)";
  EXPECT_EQ(dropped, 1u) << r.quant_report;  // the concat (the stem's relu is fused into its convolution)
  CompileOptions keep;
  keep.skip_passes = {"drop-requantized-qdq"};
  const CompileResult k = compile(kDir / "fire_qdq_uint8/model.onnx", keep);
  ASSERT_TRUE(k.ok) << diags(k.diagnostics);
  EXPECT_TRUE(ops_of(k).count("vk.aten.round.default"));
  for (int set = 0; set < 2; ++set) {
    const fs::path d = kDir / "fire_qdq_uint8" / ("test_data_set_" + std::to_string(set));
    const auto inputs = read_set(d, "input"), want = read_set(d, "output");
    for (const std::string& b : backends()) {
      const auto got = run_pte(r.pte, inputs, b), kept = run_pte(k.pte, inputs, b);
      ASSERT_EQ(got.size(), 1u);
      EXPECT_GE(sqnr_db(got[0], want[0]), 35.0) << "set " << set << " on " << b;
      const auto gb = got[0].data.bytes(), kb = kept[0].data.bytes();
      EXPECT_TRUE(std::equal(gb.begin(), gb.end(), kb.begin(), kb.end())) << "set " << set << " on " << b;  // exact
    }
  }
}

TEST(QuantizedExports, ImportedFourBitStepGraphGeneratesOnEveryBackend) {
  CompileOptions o;
  o.max_seq_len = 32;
  const CompileResult r = compile(kDir / "llama_step_dynamo_nbits4_asym_b32/model.onnx", o);
  ASSERT_TRUE(r.ok) << diags(r.diagnostics);
  const auto ops = ops_of(r);
  EXPECT_TRUE(ops.count("vk.sdpa_with_kv_cache.default"));
  EXPECT_TRUE(ops.count("vk.et_vk.linear_q4gsw.default"));
  std::vector<std::vector<int64_t>> tokens;
  for (const std::string& b : backends()) {
    RunOptions ro;
    ro.backend = b;
    Session s = Session::open(std::span<const uint8_t>(r.pte), ro);
    ASSERT_TRUE(s.ok()) << diags(s.diagnostics());
    const GenerateResult g = s.generate({17, 200, 45, 3, 99, 128, 250, 7}, 12);
    ASSERT_TRUE(g.ok) << diags(g.diagnostics);
    ASSERT_EQ(g.tokens.size(), 12u);
    tokens.push_back(g.tokens);
  }
  for (size_t i = 1; i < tokens.size(); ++i) EXPECT_EQ(tokens[i], tokens[0]);
}

}  // namespace
}  // namespace vkc::test
