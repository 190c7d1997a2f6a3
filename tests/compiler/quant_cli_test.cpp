// `vkc compile --quantize/--quantize-exclude/--quant-report` and `vkc inspect`'s artifact gates.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli_runner.h"
#include "llama_test_model.h"

namespace vkc::test {
namespace {

void expect_gate_failure(const CliResult& r, int code, const std::string& needle) {
  EXPECT_EQ(r.exit_code, code) << r.err;
  EXPECT_EQ(r.err_lines(), 1u) << r.err;
  EXPECT_EQ(r.err.rfind("vkc: error: ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find(needle), std::string::npos) << r.err;
}

TEST(QuantCli, CompileWithReportThenGate) {
  TempDir dir;
  const auto m = LlamaTestModel::write(dir.path());
  const std::string pte = (dir / "q.pte").string(), report = (dir / "q.json").string();
  CliResult c = run_vkc("compile " + m.path.string() + " --quantize 8da4w-embedding --quantize-exclude 'output*' " +
                        "--quant-report " + report + " -o " + pte);
  ASSERT_EQ(c.exit_code, 0) << c.err;
  EXPECT_NE(c.out.find("quantized 4 of 6 layers (8da4w-embedding)"), std::string::npos) << c.out;
  const auto j = nlohmann::json::parse(slurp(report));
  EXPECT_EQ(j["recipe"], "8da4w-embedding");
  EXPECT_EQ(j["summary"]["quantized"], 4);
  ASSERT_EQ(j["layers"].size(), 6u);
  for (const auto& l : j["layers"]) {
    if (l["node"] == "output") {
      EXPECT_EQ(l["reason"], "excluded by --quantize-exclude 'output*'");
    }
    if (l["node"] == "embed") {
      EXPECT_EQ(l["op"], "et_vk.embedding_q4gsw.default");
      EXPECT_EQ(l["bits"], 4);
      EXPECT_EQ(l["group_size"], 32);
      EXPECT_GT(l["sqnr_db"].get<double>(), 18.0);
      EXPECT_LT(l["bytes_after"].get<uint64_t>() * 6, l["bytes_before"].get<uint64_t>());
    }
  }
  const std::string gates = " --require-called-delegate VulkanBackend --require-family quantized-linear,embedding";
  CliResult ok = run_vkc("inspect " + pte + gates + " --max-size 770MiB");
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_TRUE(ok.err.empty()) << ok.err;
  expect_gate_failure(run_vkc("inspect " + pte + gates + ",sdpa --max-size 10KiB"), 1,
                      "missing family 'sdpa'; size ");
  expect_gate_failure(run_vkc("inspect " + pte + " --require-called-delegate XnnpackBackend"), 1,
                      "no called delegate 'XnnpackBackend'");
  expect_gate_failure(run_vkc("inspect " + pte + " --require-family sdpa,warp-drive"), 2, "unknown family 'warp-drive'");
  expect_gate_failure(run_vkc("inspect " + pte + " --max-size 12parsecs"), 2, "--max-size '12parsecs'");

  // Without quantization the same gates name the quantized family as missing.
  const std::string fp = (dir / "fp.pte").string();
  ASSERT_EQ(run_vkc("compile " + m.path.string() + " -o " + fp).exit_code, 0);
  expect_gate_failure(run_vkc("inspect " + fp + gates), 1, "missing family 'quantized-linear'");
}

TEST(QuantCli, ListFamiliesAndUsageErrors) {
  CliResult r = run_vkc("inspect --list-families");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* f : {"quantized-linear", "quantized-embedding", "sdpa", "embedding", "linear", "normalization"})
    EXPECT_NE(r.out.find(std::string("\n") + f + " "), std::string::npos) << f;
  EXPECT_NE(r.out.find("et_vk.linear_dq8ca_q4gsw.default"), std::string::npos);
  TempDir dir;
  const auto m = LlamaTestModel::write(dir.path());
  expect_gate_failure(run_vkc("compile " + m.path.string() + " --quantize-exclude 'x*' -o " + (dir / "a.pte").string()),
                      2, "needs --quantize RECIPE");
  expect_gate_failure(run_vkc("compile " + m.path.string() + " --quantize 3bit -o " + (dir / "a.pte").string()), 2,
                      "unknown recipe '3bit'");
}

}  // namespace
}  // namespace vkc::test
