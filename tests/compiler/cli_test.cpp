// The vkc command as users run it: exit codes, one-line errors, stdout vs stderr,
// and no partial output after a failure.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include <set>

#include "cli_runner.h"
#include "onnx_test_models.h"

namespace vkc::test {
namespace {

const std::string kExample = std::string(VKC_SOURCE_DIR) + "/examples/models/tiny_cnn.onnx";
const std::string kExampleShape = " --input-shape image=1x3x32x32";

// A model with one Erf node: valid ONNX, but not something the first lowering covers.
fs::path erf_model(const TempDir& dir) {
  ModelBuilder m;
  m.input("x", kF32, {1, 4});
  m.output("y", kF32, {1, 4});
  m.node("Erf", {"x"}, {"y"}, "the_erf");
  return m.save(dir / "erf.onnx");
}

void expect_one_line_error(const CliResult& r, int code, const std::string& needle) {
  EXPECT_EQ(r.exit_code, code) << r.err;
  EXPECT_EQ(r.err_lines(), 1u) << r.err;
  EXPECT_EQ(r.err.rfind("vkc: error: ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find(needle), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
}

TEST(Cli, VersionAndHelp) {
  CliResult v = run_vkc("--version");
  EXPECT_EQ(v.exit_code, 0);
  EXPECT_NE(v.out.find("vkc 0."), std::string::npos) << v.out;
  for (const char* sub : {"compile --help", "inspect --help", "--help"}) {
    CliResult h = run_vkc(sub);
    EXPECT_EQ(h.exit_code, 0) << sub;
    EXPECT_NE(h.out.find("Usage"), std::string::npos) << sub;
  }
}

TEST(Cli, CompileWritesThePteAndASummaryOnStdout) {
  TempDir dir;
  const fs::path out = dir / "m.pte";
  CliResult r = run_vkc("compile " + kExample + kExampleShape + " -o " + out.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.err.empty()) << r.err;
  EXPECT_NE(r.out.find("1 delegate(s)"), std::string::npos) << r.out;
  EXPECT_GT(fs::file_size(out), 1000u);

  CliResult j = run_vkc("compile " + kExample + kExampleShape + " --json -o " + out.string());
  ASSERT_EQ(j.exit_code, 0) << j.err;
  auto json = nlohmann::json::parse(j.out);
  EXPECT_EQ(json["delegates"], 1);
  EXPECT_EQ(json["bytes"], fs::file_size(out));
}

TEST(Cli, SameInputGivesByteIdenticalOutput) {
  TempDir dir;
  ASSERT_EQ(run_vkc("compile " + kExample + kExampleShape + " -o " + (dir / "a.pte").string()).exit_code, 0);
  ASSERT_EQ(run_vkc("compile " + kExample + kExampleShape + " -o " + (dir / "b.pte").string()).exit_code, 0);
  EXPECT_EQ(slurp(dir / "a.pte"), slurp(dir / "b.pte"));
}

TEST(Cli, InspectShowsCalledDelegateFamiliesAndOptions) {
  TempDir dir;
  const fs::path out = dir / "m.pte";
  ASSERT_EQ(run_vkc("compile " + kExample + kExampleShape + " --small-texture-limits --skip-memory-planning -o " +
                    out.string())
                .exit_code,
            0);
  CliResult text = run_vkc("inspect " + out.string());
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("VulkanBackend (called)"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("small_texture_limits=true"), std::string::npos) << text.out;

  CliResult js = run_vkc("inspect --json " + out.string());
  ASSERT_EQ(js.exit_code, 0) << js.err;
  auto j = nlohmann::json::parse(js.out);
  ASSERT_EQ(j["delegates"].size(), 1u);
  const auto& d = j["delegates"][0];
  EXPECT_EQ(d["backend"], "VulkanBackend");
  EXPECT_EQ(d["called"], true);
  EXPECT_EQ(d["compile_options"]["small_texture_limits"], true);
  EXPECT_EQ(d["compile_options"]["skip_memory_planning"], true);
  EXPECT_FALSE(d["compile_options"].contains("force_fp16"));
  EXPECT_EQ(d["memory_objects"], 0);
  EXPECT_EQ(d["families"]["convolution"], 5);
  EXPECT_EQ(d["operators"]["aten.linear.default"], 2);
  EXPECT_EQ(j["file_size"], fs::file_size(out));
}

TEST(Cli, NotesGoToStderrAndIntoTheJson) {
  // An If on input c whose else branch cannot run on x [4, 4] (a MatMul with [3, 2]): compiled
  // with the then branch, said once on stderr as a note and in --json's "notes".
  TempDir dir;
  ModelBuilder m(8, 17);
  m.input("x", kF32, {4, 4});
  m.input("c", onnx::TensorProto_DataType_BOOL, {});
  m.output("y", kF32, {std::string("h"), std::string("w")});
  m.raw_floats("two", {}, {2.0f});
  m.raw_floats("w32", {3, 2}, {1, 2, 3, 4, 5, 6});
  auto* n = m.node("If", {"c"}, {"y"}, "if");
  for (const char* name : {"then_branch", "else_branch"}) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto_AttributeType_GRAPH);
    auto* body = a->mutable_g();
    body->set_name(name);
    auto* op = body->add_node();
    const bool then = std::string(name) == "then_branch";
    op->set_op_type(then ? "Mul" : "MatMul");
    op->add_input("x");
    op->add_input(then ? "two" : "w32");
    op->add_output(then ? "t" : "e");
    ModelBuilder::set_type(body->add_output(), then ? "t" : "e", kF32, {std::string("p"), std::string("q")});
  }
  const fs::path model = m.save(dir / "if.onnx");
  const CliResult r = run_vkc("compile " + model.string() + " -o " + (dir / "a.pte").string());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err_lines(), 1u) << r.err;
  EXPECT_EQ(r.err.rfind("vkc: note: If output 'y': the else branch cannot run with these input shapes", 0), 0u) << r.err;
  const CliResult j = run_vkc("compile " + model.string() + " --json -o " + (dir / "b.pte").string());
  ASSERT_EQ(j.exit_code, 0) << j.err;
  const auto json = nlohmann::json::parse(j.out);
  ASSERT_EQ(json.at("notes").size(), 1u);
  EXPECT_NE(json["notes"][0].get<std::string>().find("(MatMul): inner dims differ"), std::string::npos);
}

TEST(Cli, SymbolicInputWithoutInputShapeSaysHowToFixIt) {
  TempDir dir;
  CliResult r = run_vkc("compile " + kExample + " -o " + (dir / "m.pte").string());
  expect_one_line_error(r, 1, "input 'image' has dynamic shape [batch,3,32,32]; fix its dims with --dim batch=1 or "
                        "--input-shape image=1x3x32x32");
  EXPECT_FALSE(fs::exists(dir / "m.pte"));
}

TEST(Cli, BadInputsGiveOneLineAndNoOutputFile) {
  TempDir dir;
  const fs::path out = dir / "out.pte";
  // missing model
  expect_one_line_error(run_vkc("compile " + (dir / "nope.onnx").string() + " -o " + out.string()), 1, "nope.onnx");
  // truncated protobuf
  const auto bytes = read_file(kExample);
  write_file(dir / "truncated.onnx", std::vector<uint8_t>(bytes.begin(), bytes.begin() + bytes.size() / 3));
  expect_one_line_error(run_vkc("compile " + (dir / "truncated.onnx").string() + " -o " + out.string()), 1,
                        "not a valid ONNX model");
  // unsupported operator: named with node and op
  expect_one_line_error(run_vkc("compile " + erf_model(dir).string() + " -o " + out.string()), 1,
                        "node 'the_erf' (Erf): no Vulkan lowering for Erf");
  EXPECT_FALSE(fs::exists(out));
  for (const auto& e : fs::directory_iterator(dir.path()))
    EXPECT_EQ(e.path().extension() == ".pte" || e.path().string().find(".tmp") != std::string::npos, false)
        << "left behind: " << e.path();
}

TEST(Cli, ExternalDataProblemsAreNamed) {
  TempDir dir;
  ModelBuilder m;
  m.input("x", kF32, {1, 2});
  m.output("y", kF32, {1, 2});
  m.external("w", kF32, {2, 2}, "../secret.bin", 0, 16);
  m.node("MatMul", {"x", "w"}, {"y"});
  expect_one_line_error(run_vkc("compile " + m.save(dir / "escape.onnx").string() + " -o " + (dir / "o.pte").string()),
                        1, "escapes the model directory");

  ModelBuilder missing;
  missing.input("x", kF32, {1, 2});
  missing.output("y", kF32, {1, 2});
  missing.external("w", kF32, {2, 2}, "weights.bin", 0, 16);
  missing.node("MatMul", {"x", "w"}, {"y"});
  expect_one_line_error(
      run_vkc("compile " + missing.save(dir / "missing.onnx").string() + " -o " + (dir / "o.pte").string()), 1,
      "weights.bin");
}

TEST(Cli, AFailedCompileLeavesAnExistingOutputUntouched) {
  TempDir dir;
  const fs::path out = dir / "keep.pte";
  write_file(out, {'o', 'l', 'd'});
  CliResult r = run_vkc("compile " + erf_model(dir).string() + " -o " + out.string());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(slurp(out), "old");
}

// --dim NAME=MIN..MAX: one program whose graph resizes; inspect names the range; `vkc run` takes
// an input of any size in it (here the committed dynamo BERT, sequence 5 of its data sets, checked
// against onnxruntime's outputs); malformed ranges are usage errors.
TEST(Cli, ARangeOfSizesIsOneProgramThatRunsEverySize) {
  TempDir dir;
  const std::string bert = std::string(VKC_SOURCE_DIR) + "/tests/models/dynamic_dims/bert_dynamo";
  const std::string pte = (dir / "bert.pte").string();
  const CliResult c = run_vkc("compile " + bert + "/model.onnx --dim sequence=1..16 -o " + pte);
  ASSERT_EQ(c.exit_code, 0) << c.err;
  EXPECT_NE(c.err.find("compiled for sequence in 1..16: one program that resizes as it runs"), std::string::npos) << c.err;
  const CliResult i = run_vkc("inspect " + pte);
  ASSERT_EQ(i.exit_code, 0) << i.err;
  EXPECT_NE(i.out.find("input 0: [1,16] dynamic-bound; dim 1 takes 1..16 (sequence)"), std::string::npos) << i.out;
  EXPECT_NE(i.out.find("vkc_dynamic_dims=\"sequence 1..16;"), std::string::npos) << i.out;
  for (const char* set : {"test_data_set_0", "test_data_set_1"}) {
    const CliResult r = run_vkc("run " + pte + " --backend cpu --expect " + bert + "/" + set);
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    EXPECT_NE(r.out.find("result: pass"), std::string::npos) << r.out;
  }
  // Seeded inputs of a size in the range (every input that carries the sequence), and one beyond it.
  const CliResult seven = run_vkc("run " + pte + " --random 1 --input-shape input_ids=1x7 --input-shape 1=1x7 "
                                  "--input-shape 2=1x7");
  EXPECT_EQ(seven.exit_code, 0) << seven.err;
  EXPECT_NE(seven.out.find("output 0 (last_hidden_state): f32 [1,7,64]"), std::string::npos) << seven.out;
  expect_one_line_error(run_vkc("run " + pte + " --random 1 --input-shape 0=1x17"), 2,
                        "--input-shape 0=1x17: input 0 takes [1,16] or smaller");
  const std::string base = "compile " + bert + "/model.onnx -o " + (dir / "o.pte").string();
  expect_one_line_error(run_vkc(base + " --dim sequence=16..4"), 2, "MIN 16 must be below MAX 4");
  expect_one_line_error(run_vkc(base + " --dim sequence=1..x"), 2, "'x' is not a positive integer");
  expect_one_line_error(run_vkc(base + " --dim sequence=1..8 --dim sequence=4"), 2, "--dim given twice for 'sequence'");
  EXPECT_FALSE(fs::exists(dir / "o.pte"));
}

TEST(Cli, BadOptionValuesExitWithUsageErrors) {
  TempDir dir;
  const std::string base = "compile " + kExample + " -o " + (dir / "o.pte").string();
  expect_one_line_error(run_vkc(base + " --texture-limits 1,2"), 2, "expected X,Y,Z");
  expect_one_line_error(run_vkc(base + " --texture-limits 1,0,2"), 2, "'0' is not a positive integer");
  expect_one_line_error(run_vkc(base + " --input-shape image"), 2, "expected NAME=D1xD2x");
  expect_one_line_error(run_vkc(base + " --input-shape image=1x3xAx32"), 2, "'A' is not a positive integer");
  expect_one_line_error(run_vkc(base + " --input-shape nope=1x2"), 1, "nope");
  expect_one_line_error(run_vkc(base + " --input-value image"), 2, "expected NAME=V[,V...]");
  expect_one_line_error(run_vkc(base + " --input-value image=1,2"), 1,
                        "--input-value 'image=1,2': the input has rank 4 with symbolic dims");
  expect_one_line_error(run_vkc(base + kExampleShape + " --input-value image=1,x"), 1,
                        "2 value(s) given, but the input has shape [1,3,32,32] (3072 elements)");
  expect_one_line_error(run_vkc(base + kExampleShape + " --dump-ir-after no-such-pass"), 1, "no pass named");
  expect_one_line_error(run_vkc("compile --bogus-flag"), 2, "bogus-flag");
  expect_one_line_error(run_vkc(""), 2, "subcommand");
  EXPECT_FALSE(fs::exists(dir / "o.pte"));
}

TEST(Cli, InspectRejectsCorruptFiles) {
  TempDir dir;
  const fs::path out = dir / "m.pte";
  ASSERT_EQ(run_vkc("compile " + kExample + kExampleShape + " -o " + out.string()).exit_code, 0);
  auto bytes = read_file(out);
  write_file(dir / "truncated.pte", std::vector<uint8_t>(bytes.begin(), bytes.begin() + bytes.size() / 2));
  expect_one_line_error(run_vkc("inspect " + (dir / "truncated.pte").string()), 1, "truncated.pte");
  write_file(dir / "garbage.pte", std::vector<uint8_t>(64, 0x5a));
  expect_one_line_error(run_vkc("inspect " + (dir / "garbage.pte").string()), 1, "garbage.pte");
  expect_one_line_error(run_vkc("inspect " + (dir / "absent.pte").string()), 1, "absent.pte");
}

TEST(Cli, PrintPipelineAndDumpIr) {
  CliResult p = run_vkc("compile --print-pipeline");
  ASSERT_EQ(p.exit_code, 0) << p.err;
  EXPECT_NE(p.out.find("lower-to-vulkan"), std::string::npos);
  EXPECT_NE(p.out.find("fuse-batch-norm"), std::string::npos);

  TempDir dir;
  CliResult d = run_vkc("compile " + kExample + kExampleShape + " --dump-ir-after lower-to-vulkan -o " +
                        (dir / "m.pte").string());
  ASSERT_EQ(d.exit_code, 0) << d.err;
  EXPECT_NE(d.err.find("// ----- IR after lower-to-vulkan"), std::string::npos);
  EXPECT_NE(d.err.find("vk.aten.convolution.default("), std::string::npos);
  EXPECT_EQ(d.err.find("IR after remove-identity"), std::string::npos);
}

TEST(Cli, VerboseListsEveryNodeDecisionOnStderr) {
  TempDir dir;
  CliResult r = run_vkc("compile " + kExample + kExampleShape + " -v -o " + (dir / "m.pte").string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("stem_conv"), std::string::npos);
  EXPECT_NE(r.err.find("classifier"), std::string::npos);
  EXPECT_EQ(r.out.find("stem_conv"), std::string::npos);
  EXPECT_NE(r.err.find("delegated 19 of 19 nodes into 1 delegate(s)"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("time: import"), std::string::npos) << r.err;
}

TEST(Cli, VerboseShowsDecisionsEvenWhenTheCompileFails) {
  TempDir dir;
  CliResult r = run_vkc("compile " + erf_model(dir).string() + " -v -o " + (dir / "m.pte").string());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("delegated 0 of 1 nodes"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("no Vulkan lowering for Erf"), std::string::npos) << r.err;
}

TEST(Cli, ProgressIsPlainLinesOffATerminalAndOnlyOnRequest) {
  TempDir dir;
  CliResult r = run_vkc("compile " + kExample + kExampleShape + " --progress -o " + (dir / "m.pte").string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err.find('\r'), std::string::npos) << r.err;
  for (const char* line : {"vkc: [1/5] import\n", "vkc: [3/5] partition\n", "vkc: [5/5] write\n", "vkc: done in "})
    EXPECT_NE(r.err.find(line), std::string::npos) << line << "\n" << r.err;
  CliResult off = run_vkc("compile " + kExample + kExampleShape + " --no-progress -o " + (dir / "m.pte").string());
  ASSERT_EQ(off.exit_code, 0) << off.err;
  EXPECT_TRUE(off.err.empty()) << off.err;
}

TEST(Cli, UnknownQuantizationRecipeIsAUsageError) {
  TempDir dir;
  const std::string out = (dir / "m.pte").string();
  expect_one_line_error(run_vkc("compile " + kExample + kExampleShape + " --quantize 8da4w:48 -o " + out), 2,
                        "--quantize '8da4w:48': group size '48' is not one of 32, 64, 128, 256");
  EXPECT_FALSE(fs::exists(out));
}

// A MaxPool on 1x4x4x4096: fits the default limits, not 2048-wide textures.
fs::path wide_model(const TempDir& dir) {
  ModelBuilder m;
  m.input("x", kF32, {1, 4, 4, 4096});
  m.output("y", kF32, {1, 4, 4, 4096});
  m.node("Relu", {"x"}, {"r"}, "first_relu");
  auto* pool = m.node("MaxPool", {"r"}, {"p"}, "wide_pool");
  attr_ints(pool, "kernel_shape", {1, 1});
  m.node("Relu", {"p"}, {"y"}, "last_relu");
  return m.save(dir / "wide.onnx");
}

TEST(Cli, DevicesListAndSelectLimits) {
  CliResult list = run_vkc("compile --list-devices");
  ASSERT_EQ(list.exit_code, 0);
  for (const char* d : {"default", "small-texture", "lavapipe", "desktop-nvidia", "adreno-7xx", "mali-valhall"})
    EXPECT_NE(list.out.find(d), std::string::npos) << d;

  TempDir dir;
  const std::string model = wide_model(dir).string();
  const std::string out = (dir / "m.pte").string();
  EXPECT_EQ(run_vkc("compile " + model + " --device desktop-nvidia -o " + out).exit_code, 0);
  expect_one_line_error(run_vkc("compile " + model + " --device small-texture -o " + out), 1,
                        "texture extent x=4096 > 2048 (small-texture)");
  expect_one_line_error(run_vkc("compile " + model + " --device nope -o " + out), 1, "no built-in device profile 'nope'");
  // A profile file; an explicit --texture-limits still wins over it.
  write_file(dir / "tiny.yaml", [] {
    std::string y =
        "name: tiny\ntexture_limits: [1024, 1024, 1024]\nmax_storage_buffer_range: 1048576\nfp16: false\n"
        "int8: true\nint16: true\nint8_dot_product: false\nsubgroup_size: 8\ncooperative_matrix: none\n";
    return std::vector<uint8_t>(y.begin(), y.end());
  }());
  const std::string file = " --device-file " + (dir / "tiny.yaml").string();
  expect_one_line_error(run_vkc("compile " + model + file + " -o " + out), 1, "(tiny)");
  EXPECT_EQ(run_vkc("compile " + model + file + " --texture-limits 8192,8192,8192 -o " + out).exit_code, 0);
  expect_one_line_error(run_vkc("compile " + model + file + " --force-fp16 -o " + out), 1, "has no fp16 support");
}

TEST(Cli, FallbackRunsRejectedNodesAsPortableKernels) {
  TempDir dir;
  const std::string model = wide_model(dir).string();
  const fs::path out = dir / "m.pte";
  CliResult r = run_vkc("compile " + model + " --small-texture-limits --fallback cpu -o " + out.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(run_vkc("inspect --json " + out.string()).out);
  const auto& plan = j["execution_plans"][0];
  EXPECT_EQ(plan["delegate_calls"], 2);
  EXPECT_EQ(plan["kernel_calls"], 1);
  EXPECT_EQ(plan["operators"][0], "aten::max_pool2d_with_indices.out");
  expect_one_line_error(run_vkc("compile " + model + " --fallback gpu -o " + out.string()), 2, "--fallback");
}

TEST(Cli, PartitionReportsInJsonAndDot) {
  TempDir dir;
  const std::string model = wide_model(dir).string();
  const fs::path report = dir / "r.json", dot = dir / "r.dot";
  // Written even when the compile fails: the report says why.
  CliResult r = run_vkc("compile " + model + " --small-texture-limits --report " + report.string() + " --report-dot " +
                        dot.string() + " -o " + (dir / "m.pte").string());
  EXPECT_EQ(r.exit_code, 1);
  auto j = nlohmann::json::parse(slurp(report));
  EXPECT_EQ(j["device"]["name"], "small-texture");
  EXPECT_EQ(j["summary"]["nodes"], 3);
  EXPECT_EQ(j["summary"]["left_out"], 1);
  EXPECT_EQ(j["nodes"][1]["name"], "wide_pool");
  EXPECT_TRUE(j["nodes"][1]["delegate"].is_null());
  EXPECT_NE(j["nodes"][1]["reason"].get<std::string>().find("texture extent x=4096 > 2048"), std::string::npos);
  EXPECT_EQ(j["delegates"].size(), 2u);
  EXPECT_EQ(j["delegates"][0]["tensors"][0]["storage"], "texture3d");
  const std::string d = slurp(dot);
  EXPECT_EQ(d.rfind("digraph vkc {", 0), 0u);
  EXPECT_NE(d.find("wide_pool"), std::string::npos);
  EXPECT_NE(d.find("#fb8072"), std::string::npos);  // the node left out
}

TEST(Cli, PayloadsEmbedTheSpirvTheModelUsesUnlessToldNot) {
  TempDir dir;
  const fs::path with = dir / "with.pte", without = dir / "without.pte";
  ASSERT_EQ(run_vkc("compile " + kExample + kExampleShape + " -o " + with.string()).exit_code, 0);
  ASSERT_EQ(run_vkc("compile " + kExample + kExampleShape + " --no-embed-shaders -o " + without.string()).exit_code, 0);
  auto d = nlohmann::json::parse(run_vkc("inspect --json " + with.string()).out)["delegates"][0];
  auto n = nlohmann::json::parse(run_vkc("inspect --json " + without.string()).out)["delegates"][0];
  EXPECT_GE(d["shaders"].size(), 5u);  // conv, pool, linear, softmax, elementwise, ...
  EXPECT_GT(d["shader_bytes"].get<uint64_t>(), 10000u);
  EXPECT_EQ(n["shaders"].size(), 0u);
  EXPECT_EQ(n["shader_bytes"], 0);
  // The same operators either way: embedding only adds bytes.
  EXPECT_EQ(d["operators"], n["operators"]);
  EXPECT_GT(fs::file_size(with), fs::file_size(without));
  std::set<std::string> names;  // distinct variants
  for (const auto& s : d["shaders"]) EXPECT_TRUE(names.insert(s.get<std::string>()).second);
}

// --external-weights without a FILE writes OUT.ptd beside OUT.pte; inspect and run find it there
// without a flag and take another with --data; a program run without its data fails with one line.
TEST(Cli, ExternalWeightsGoBesideTheProgramAndAreFoundThere) {
  TempDir dir;
  const fs::path pte = dir / "m.pte", ptd = dir / "m.ptd";
  const CliResult c = run_vkc("compile " + kExample + kExampleShape + " -o " + pte.string() + " --external-weights --json");
  ASSERT_EQ(c.exit_code, 0) << c.err;
  const auto j = nlohmann::json::parse(c.out);
  EXPECT_EQ(j["external_weights"]["file"], ptd.string());
  EXPECT_EQ(j["external_weights"]["bytes"].get<uint64_t>(), fs::file_size(ptd));
  const auto report = nlohmann::json::parse(run_vkc("inspect --json " + pte.string()).out);
  ASSERT_EQ(report["external_data"].size(), 1u);
  EXPECT_EQ(report["delegates"][0]["constants_not_found"], 0);
  EXPECT_EQ(run_vkc("run " + pte.string() + " --random 1").exit_code, 0);
  fs::rename(ptd, dir / "w.ptd");
  const CliResult alone = run_vkc("run " + pte.string() + " --random 1");
  EXPECT_NE(alone.exit_code, 0);
  EXPECT_NE(alone.err.find("needs its .ptd"), std::string::npos) << alone.err;
  EXPECT_EQ(std::count(alone.err.begin(), alone.err.end(), '\n'), 1) << alone.err;
  EXPECT_EQ(run_vkc("run " + pte.string() + " --random 1 --data " + (dir / "w.ptd").string()).exit_code, 0);
  const auto given = nlohmann::json::parse(run_vkc("inspect --json " + pte.string() + " --data " + (dir / "w.ptd").string()).out);
  EXPECT_EQ(given["delegates"][0]["constants_not_found"], 0);
}

}  // namespace
}  // namespace vkc::test
