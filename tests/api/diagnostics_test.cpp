// Errors come back as diagnostics naming the node and operator; nothing throws.
#include <gtest/gtest.h>

#include <algorithm>

#include "api_test_support.h"

namespace vkc::test {
namespace {

const Diagnostic* find_node(const std::vector<Diagnostic>& ds, const std::string& node) {
  auto it = std::find_if(ds.begin(), ds.end(), [&](const Diagnostic& d) { return d.node == node; });
  return it == ds.end() ? nullptr : &*it;
}

TEST(ApiDiagnostics, NodesTheGpuCannotRunAreNamedWithTheirOperator) {
  TempDir dir;
  ModelBuilder b;
  b.input("x", kF32, {3, 3});
  b.node("Relu", {"x"}, {"r"}, "relu");
  b.node("Det", {"r"}, {"y"}, "determinant");
  b.output("y", kF32, {});
  const fs::path model = b.save(dir / "m.onnx");

  const CompileResult r = compile(model, dir / "m.pte");
  EXPECT_FALSE(r);
  EXPECT_FALSE(fs::exists(dir / "m.pte"));
  EXPECT_TRUE(r.pte.empty());
  ASSERT_FALSE(r.diagnostics.empty());
  EXPECT_NE(r.error().find("cannot run on Vulkan"), std::string::npos) << r.error();
  const Diagnostic* det = find_node(r.diagnostics, "determinant");
  ASSERT_NE(det, nullptr) << describe(r.diagnostics);
  EXPECT_EQ(det->severity, Severity::Error);
  EXPECT_EQ(det->op, "Det");
  EXPECT_NE(det->message.find("determinant"), std::string::npos);
  // The partition report is there even though the compile failed.
  EXPECT_EQ(r.partition.rejected, 1u);
  ASSERT_FALSE(r.partition.nodes.empty());
  EXPECT_EQ(r.partition.nodes.back().name, "determinant");
  EXPECT_FALSE(r.partition.nodes.back().reason.empty());
}

TEST(ApiDiagnostics, ImportErrorsNameTheNodeAndOperator) {
  ModelBuilder b;
  b.input("x", kF32, {1, 4});
  b.node("Mystery", {"x"}, {"y"}, "odd_one", "com.example");
  b.output("y", kF32, {1, 4});
  const CompileResult r = compile(b.bytes(), fs::path());
  EXPECT_FALSE(r);
  ASSERT_EQ(r.diagnostics.size(), 1u) << describe(r.diagnostics);
  EXPECT_EQ(r.diagnostics[0].node, "odd_one");
  EXPECT_EQ(r.diagnostics[0].op, "com.example::Mystery");
  EXPECT_EQ(r.diagnostics[0].str().rfind("error: <model bytes>: node 'odd_one'", 0), 0u) << r.diagnostics[0].str();
}

TEST(ApiDiagnostics, GarbageAndMissingFilesAreDiagnosticsNotExceptions) {
  const std::vector<uint8_t> garbage = {0xff, 0xff, 0xff, 0x01, 0x02};
  const CompileResult bad_bytes = compile(garbage, {});
  EXPECT_FALSE(bad_bytes);
  EXPECT_FALSE(bad_bytes.error().empty());

  const CompileResult missing = compile(fs::path("/nonexistent/model.onnx"));
  EXPECT_FALSE(missing);
  EXPECT_NE(missing.error().find("/nonexistent/model.onnx"), std::string::npos) << missing.error();

  const CompileResult unwritable = compile(kExampleModel, "/nonexistent/dir/m.pte", example_options());
  EXPECT_FALSE(unwritable);
  EXPECT_NE(unwritable.error().find("/nonexistent/dir/m.pte"), std::string::npos) << unwritable.error();
}

TEST(ApiDiagnostics, DynamicInputsSayHowToFixThem) {
  const CompileResult r = compile(kExampleModel);  // no input shape for the symbolic batch
  EXPECT_FALSE(r);
  EXPECT_NE(r.error().find("--input-shape"), std::string::npos) << r.error();
}

TEST(ApiDiagnostics, UnsupportedOptionsFailBeforeReadingTheModel) {
  TempDir dir;
  CompileOptions device = example_options();
  device.device_profile = "no-such-gpu";
  const CompileResult r1 = compile(kExampleModel, dir / "m.pte", device);
  EXPECT_FALSE(r1);
  EXPECT_FALSE(fs::exists(dir / "m.pte"));
  ASSERT_EQ(r1.diagnostics.size(), 1u);
  EXPECT_NE(r1.error().find("no built-in device profile 'no-such-gpu'"), std::string::npos) << r1.error();
  device.device_profile = "adreno-7xx";
  const CompileResult ok = compile(kExampleModel, dir / "m.pte", device);
  EXPECT_TRUE(ok) << ok.error();
  EXPECT_EQ(ok.partition.device_limits, "adreno-7xx");

  CompileOptions quant = example_options();
  quant.quantization_recipe = "9da4w";
  const CompileResult r2 = compile(kExampleModel, quant);
  EXPECT_FALSE(r2);
  EXPECT_NE(r2.error().find("unknown recipe '9da4w'"), std::string::npos) << r2.error();
  EXPECT_TRUE(r2.partition.nodes.empty());  // nothing ran

  CompileOptions unknown_pass = example_options();
  unknown_pass.dump_ir_after = "no-such-pass";
  const CompileResult r3 = compile(kExampleModel, unknown_pass);
  EXPECT_FALSE(r3);
  EXPECT_NE(r3.error().find("no-such-pass"), std::string::npos) << r3.error();
}

TEST(ApiDiagnostics, ConflictingLimitsAreAWarningAndTheCompileGoesOn) {
  CompileOptions o = example_options();
  o.small_texture_limits = true;
  o.texture_limits = TextureLimits{4096, 4096, 4096};
  const CompileResult r = compile(kExampleModel, o);
  ASSERT_TRUE(r) << describe(r.diagnostics);
  ASSERT_EQ(r.diagnostics.size(), 1u);
  EXPECT_EQ(r.diagnostics[0].severity, Severity::Warning);
  EXPECT_EQ(r.partition.device_limits, "texture_limits 4096,4096,4096");
}

}  // namespace
}  // namespace vkc::test
