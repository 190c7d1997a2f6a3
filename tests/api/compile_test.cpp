// vkc::compile from a file or memory, to a file or memory: one pipeline, the same bytes.
#include <gtest/gtest.h>

#include <algorithm>

#include "api_test_support.h"

namespace vkc::test {
namespace {

TEST(ApiCompile, FileMemoryAndBytesGiveTheSameProgram) {
  TempDir dir;
  const CompileOptions o = example_options();
  const CompileResult to_file = compile(kExampleModel, dir / "m.pte", o);
  ASSERT_TRUE(to_file) << describe(to_file.diagnostics);
  EXPECT_TRUE(to_file.pte.empty());
  const std::vector<uint8_t> file_bytes = read_file(dir / "m.pte");
  EXPECT_EQ(to_file.summary.output_bytes, file_bytes.size());

  const CompileResult path_to_bytes = compile(kExampleModel, o);
  ASSERT_TRUE(path_to_bytes) << describe(path_to_bytes.diagnostics);
  EXPECT_EQ(path_to_bytes.pte, file_bytes);

  const std::vector<uint8_t> model = read_file(kExampleModel);
  const CompileResult bytes_to_bytes = compile(model, {}, o);
  ASSERT_TRUE(bytes_to_bytes) << describe(bytes_to_bytes.diagnostics);
  EXPECT_EQ(bytes_to_bytes.pte, file_bytes);
  EXPECT_TRUE(bytes_to_bytes.diagnostics.empty());
}

TEST(ApiCompile, ResultCarriesThePartitionReportAndSummary) {
  const CompileResult r = compile(kExampleModel, example_options());
  ASSERT_TRUE(r) << describe(r.diagnostics);
  EXPECT_EQ(r.partition.device_limits, "default");
  EXPECT_EQ(r.partition.rejected, 0u);
  EXPECT_EQ(r.partition.delegated, r.partition.nodes.size());
  ASSERT_FALSE(r.partition.delegates.empty());
  size_t in_delegates = 0;
  for (const auto& d : r.partition.delegates) in_delegates += d.nodes;
  EXPECT_EQ(r.summary.runtime_nodes, in_delegates);
  EXPECT_EQ(r.summary.delegates, r.partition.delegates.size());
  EXPECT_GT(r.summary.onnx_nodes, 0u);
  EXPECT_EQ(r.summary.output_bytes, r.pte.size());
  for (const auto& n : r.partition.nodes) {
    EXPECT_FALSE(n.name.empty());
    EXPECT_GE(n.delegate, 0) << n.name;
  }
  ASSERT_EQ(r.summary.phase_seconds.size(), 5u);
  EXPECT_EQ(r.summary.phase_seconds.front().first, "import");
  EXPECT_EQ(r.summary.phase_seconds.back().first, "write");
}

TEST(ApiCompile, ProgressReportsEveryPhaseStartAndEndInOrder) {
  std::vector<Progress> seen;
  const CompileResult r = compile(kExampleModel, example_options(), [&](const Progress& p) { seen.push_back(p); });
  ASSERT_TRUE(r) << describe(r.diagnostics);
  ASSERT_EQ(seen.size(), 2u * kNumPhases);
  for (int i = 0; i < kNumPhases; ++i) {
    EXPECT_EQ(seen[2 * i].phase, static_cast<Phase>(i));
    EXPECT_FALSE(seen[2 * i].finished);
    EXPECT_EQ(seen[2 * i + 1].phase, static_cast<Phase>(i));
    EXPECT_TRUE(seen[2 * i + 1].finished);
    EXPECT_GE(seen[2 * i + 1].seconds, 0.0);
  }
  EXPECT_EQ(to_string(seen[4].phase), "partition");
  EXPECT_DOUBLE_EQ(seen.front().fraction, 0.0);
  EXPECT_DOUBLE_EQ(seen.back().fraction, 1.0);
}

TEST(ApiCompile, AThrowingProgressCallbackCancelsWithADiagnostic) {
  TempDir dir;
  const CompileResult r = compile(kExampleModel, dir / "m.pte", example_options(), [](const Progress& p) {
    if (p.phase == Phase::Partition) throw std::runtime_error("cancelled by the user");
  });
  EXPECT_FALSE(r);
  EXPECT_EQ(r.error(), "cancelled by the user");
  EXPECT_FALSE(fs::exists(dir / "m.pte"));
}

TEST(ApiCompile, DumpIrAfterReturnsTheIrText) {
  CompileOptions o = example_options();
  o.dump_ir_after = "all";
  const CompileResult r = compile(kExampleModel, o);
  ASSERT_TRUE(r) << describe(r.diagnostics);
  ASSERT_FALSE(r.ir_dumps.empty());
  for (const auto& [pass, text] : r.ir_dumps) {
    EXPECT_FALSE(pass.empty());
    EXPECT_FALSE(text.empty()) << pass;
  }
}

TEST(ApiCompile, PayloadOptionsTravelInEveryDelegate) {
  CompileOptions o = example_options();
  o.force_fp16 = true;
  o.skip_memory_planning = true;
  o.texture_limits = TextureLimits{4096, 4096, 1024};
  const CompileResult r = compile(kExampleModel, o);
  ASSERT_TRUE(r) << describe(r.diagnostics);
  const InspectResult in = inspect(r.pte);
  ASSERT_TRUE(in) << describe(in.diagnostics);
  ASSERT_FALSE(in.report.delegates.empty());
  for (const auto& d : in.report.delegates) {
    const auto back = CompileOptions::from_compile_specs(d.compile_specs);
    ASSERT_TRUE(back.has_value());
    EXPECT_EQ(back->force_fp16, std::optional<bool>(true));
    EXPECT_EQ(back->skip_memory_planning, std::optional<bool>(true));
    EXPECT_EQ(back->texture_limits, o.texture_limits);
    EXPECT_EQ(back->small_texture_limits, std::nullopt);
  }
}

// External data is resolved against base_dir for in-memory models.
TEST(ApiCompile, InMemoryModelsReadExternalDataFromTheBaseDir) {
  TempDir dir;
  write_file(dir / "weights.bin", float_bytes({1, 2, 3, 4}));
  ModelBuilder b;
  b.input("x", kF32, {1, 4});
  b.external("w", kF32, {1, 4}, "weights.bin", 0, 16);
  b.node("Add", {"x", "w"}, {"y"}, "add");
  b.output("y", kF32, {1, 4});
  const fs::path model = b.save(dir / "m.onnx");

  const CompileResult from_file = compile(model);
  ASSERT_TRUE(from_file) << describe(from_file.diagnostics);
  const std::vector<uint8_t> bytes = read_file(model);
  const CompileResult from_bytes = compile(bytes, dir.path());
  ASSERT_TRUE(from_bytes) << describe(from_bytes.diagnostics);
  EXPECT_EQ(from_bytes.pte, from_file.pte);

  const CompileResult no_base_dir = compile(bytes, {});
  EXPECT_FALSE(no_base_dir);
  EXPECT_NE(no_base_dir.error().find("<model bytes>"), std::string::npos) << no_base_dir.error();
}

// --external-weights: the constants in ExecuTorch's external data file beside the program. The pair
// runs (FILE.ptd found beside FILE.pte, or named in RunOptions::data_files) and gives the outputs of
// the single-file program exactly; a compile to memory returns the same two files' bytes; inspect
// reads the pair; the program without its data fails with one line naming the remedy.
TEST(ApiCompile, ExternalWeightsMakeAProgramAndItsPtdThatRunAsTheSingleFile) {
  TempDir dir;
  CompileOptions o = example_options();
  const CompileResult single = compile(kExampleModel, dir / "single.pte", o);
  ASSERT_TRUE(single) << describe(single.diagnostics);
  o.external_weights = (dir / "pair.ptd").string();
  const CompileResult pair = compile(kExampleModel, dir / "pair.pte", o);
  ASSERT_TRUE(pair) << describe(pair.diagnostics);
  ASSERT_TRUE(fs::exists(dir / "pair.ptd"));
  EXPECT_EQ(pair.summary.external_bytes, fs::file_size(dir / "pair.ptd"));
  EXPECT_LT(fs::file_size(dir / "pair.pte"), fs::file_size(dir / "single.pte"));

  const CompileResult memory = compile(kExampleModel, o);
  ASSERT_TRUE(memory) << describe(memory.diagnostics);
  EXPECT_EQ(memory.pte, read_file(dir / "pair.pte"));
  EXPECT_EQ(memory.ptd, read_file(dir / "pair.ptd"));

  const Tensor x = Tensor::of(ir::DType::Float32, {1, 3, 32, 32}, normal_floats(3 * 32 * 32, 5));
  const RunResult want = run(dir / "single.pte", {x});
  ASSERT_TRUE(want) << describe(want.diagnostics);
  const RunResult beside = run(dir / "pair.pte", {x});  // pair.ptd found beside pair.pte
  ASSERT_TRUE(beside) << describe(beside.diagnostics);
  ASSERT_EQ(beside.outputs.size(), want.outputs.size());
  const auto same = [](const Tensor& a, const Tensor& b) {
    return std::ranges::equal(a.data.bytes(), b.data.bytes());
  };
  EXPECT_TRUE(same(beside.outputs[0], want.outputs[0]));

  fs::rename(dir / "pair.ptd", dir / "weights.ptd");
  const InspectResult alone = inspect(dir / "pair.pte");
  ASSERT_TRUE(alone.ok) << describe(alone.diagnostics);
  EXPECT_EQ(alone.report.named_data, 1u) << "only the I/O names stay in the .pte";
  ASSERT_EQ(alone.report.delegates.size(), 1u);
  EXPECT_EQ(alone.report.delegates[0].constants_not_found, alone.report.delegates[0].constants);
  const RunResult missing = run(dir / "pair.pte", {x});
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.diagnostics.at(0).message.find("--external-weights needs its .ptd"), std::string::npos)
      << describe(missing.diagnostics);
  RunOptions ro;
  ro.data_files = {(dir / "weights.ptd").string()};
  const RunResult named = run(dir / "pair.pte", {x}, ro);
  ASSERT_TRUE(named) << describe(named.diagnostics);
  EXPECT_TRUE(same(named.outputs[0], want.outputs[0]));
  ro.data_files.push_back((dir / "weights.ptd").string());  // the same keys twice
  const RunResult twice = run(dir / "pair.pte", {x}, ro);
  ASSERT_FALSE(twice);
  EXPECT_NE(twice.diagnostics.at(0).message.find("is in the program too"), std::string::npos)
      << describe(twice.diagnostics);

  fs::rename(dir / "weights.ptd", dir / "pair.ptd");
  const InspectResult i = inspect(dir / "pair.pte");
  ASSERT_TRUE(i.ok) << describe(i.diagnostics);
  ASSERT_EQ(i.report.external.size(), 1u);
  EXPECT_EQ(i.report.external[0].entries, single.summary.constants);
  EXPECT_NE(i.text().find("external data: "), std::string::npos);
}

}  // namespace
}  // namespace vkc::test
