// The bad-input matrix (docs/bad-inputs.md): each row is one hostile or broken input given to the
// CLI. The answer is always one `vkc: error:` line on stderr naming the problem, a non-zero exit, and
// no output file (not even a partial one). Allocation before checking a claimed size is covered by
// rows whose claims are huge (a sanitizer or an out-of-memory would fail them).
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <filesystem>
#include <fstream>
#include <functional>

#include "cli_runner.h"
#include "onnx_test_models.h"

namespace vkc::test {
namespace {

const fs::path kExample = fs::path(VKC_SOURCE_DIR) / "examples/models/tiny_cnn.onnx";

struct Row {
  const char* name;
  // Writes the input into the folder; returns the vkc arguments (output: DIR/out.pte).
  std::function<std::string(const fs::path&)> make;
  const char* needle;  // what the error line names
};

fs::path relu_model(const fs::path& dir, const std::string& file, const std::vector<DimSpec>& dims, int64_t opset = 13) {
  ModelBuilder m(8, opset);
  m.input("x", kF32, dims);
  m.output("y", kF32, dims);
  m.node("Relu", {"x"}, {"y"}, "relu");
  return m.save(dir / file);
}

std::string compile_args(const fs::path& model, const fs::path& dir, const std::string& extra = "") {
  return "compile " + model.string() + " -o " + (dir / "out.pte").string() + " --no-progress " + extra;
}

// An Add of x and an external-data initializer `w` [4] at `location` (relative to the model).
fs::path external_model(const fs::path& dir, const std::string& location, uint64_t length = 16) {
  ModelBuilder m(8, 13);
  m.input("x", kF32, {4});
  m.output("y", kF32, {4});
  m.external("w", kF32, {4}, location, 0, length);
  m.node("Add", {"x", "w"}, {"y"}, "add");
  return m.save(dir / "ext.onnx");
}

fs::path example_pte(const fs::path& dir) {
  const CliResult r = run_vkc("compile " + kExample.string() + " --input-shape image=1x3x32x32 --no-progress -o " +
                              (dir / "good.pte").string());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return dir / "good.pte";
}

std::vector<char> read_all(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

void write_all(const fs::path& p, const std::vector<char>& b) {
  std::ofstream(p, std::ios::binary).write(b.data(), static_cast<std::streamsize>(b.size()));
}

const std::vector<Row>& rows() {
  static const std::vector<Row> r = {
      {"truncated protobuf",
       [](const fs::path& d) {
         auto b = read_all(kExample);
         b.resize(b.size() / 2);
         write_all(d / "half.onnx", b);
         return compile_args(d / "half.onnx", d);
       },
       "not a valid ONNX model"},
      {"corrupt protobuf",
       [](const fs::path& d) {
         std::vector<char> b(4096);
         for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<char>((i * 2654435761u) >> 13);
         write_all(d / "noise.onnx", b);
         return compile_args(d / "noise.onnx", d);
       },
       "not a valid ONNX model"},
      {"graph cycle",
       [](const fs::path& d) {
         ModelBuilder m;
         m.input("x", kF32, {2});
         m.output("b", kF32, {2});
         m.node("Add", {"x", "b"}, {"a"});
         m.node("Relu", {"a"}, {"b"});
         return compile_args(m.save(d / "cycle.onnx"), d);
       },
       "the graph has a cycle through node (Add) writing 'a'"},
      {"dims that overflow int64",
       [](const fs::path& d) { return compile_args(relu_model(d, "big.onnx", {int64_t{1} << 40, int64_t{1} << 40}), d); },
       "claims more than 2^62 elements"},
      {"dims whose bytes overflow size_t",
       [](const fs::path& d) { return compile_args(relu_model(d, "big.onnx", {int64_t{1} << 31, int64_t{1} << 31, 16}), d); },
       "claims more than 2^62 elements"},
      {"negative dim",
       [](const fs::path& d) { return compile_args(relu_model(d, "neg.onnx", {2, int64_t{-3}}), d); },
       "input 'x' has dynamic shape [2,?]"},
      {"external data path traversal",
       [](const fs::path& d) { return compile_args(external_model(d, "../../../etc/passwd"), d); },
       "escapes the model directory"},
      {"external data symlink out of the model folder",
       [](const fs::path& d) {
         fs::create_directories(d / "elsewhere");
         std::ofstream(d / "elsewhere/w.bin", std::ios::binary) << std::string(16, '\0');
         fs::create_directories(d / "m");
         fs::create_symlink(d / "elsewhere/w.bin", d / "m/w.bin");
         const fs::path m = external_model(d, "w.bin");
         fs::rename(m, d / "m/ext.onnx");
         return compile_args(d / "m/ext.onnx", d);
       },
       "escapes the model directory"},
      {"missing external file",
       [](const fs::path& d) { return compile_args(external_model(d, "absent.bin"), d); },
       "does not exist"},
      {"short external file",
       [](const fs::path& d) {
         std::ofstream(d / "short.bin", std::ios::binary) << std::string(8, '\0');
         return compile_args(external_model(d, "short.bin"), d);
       },
       "lies beyond the end of 'short.bin' (8 bytes)"},
      {"unknown domain",
       [](const fs::path& d) {
         ModelBuilder m;
         m.import_opset("com.example", 1);
         m.input("x", kF32, {2});
         m.output("y", kF32, {2});
         m.node("Frob", {"x"}, {"y"}, "frob", "com.example");
         return compile_args(m.save(d / "dom.onnx"), d);
       },
       "unsupported operator domain 'com.example'"},
      {"unknown opset",
       [](const fs::path& d) { return compile_args(relu_model(d, "op99.onnx", {2}, 99), d); },
       "opset 99 of the ONNX domain is not one vkc knows"},
      {"a tiny file claiming a huge tensor",
       [](const fs::path& d) {
         ModelBuilder m;
         m.input("x", kF32, {2});
         m.output("y", kF32, {2});
         m.initializer("w", kF32, {1000000000, 1000000000})->set_raw_data(std::string(4, '\0'));
         m.node("Add", {"x", "w"}, {"y"});
         return compile_args(m.save(d / "huge.onnx"), d);
       },
       "raw_data has 4 bytes but its type and shape need 4000000000000000000"},
      {"a tiny tensor file claiming a huge tensor",
       [](const fs::path& d) {
         onnx::TensorProto t;
         t.set_data_type(kF32);
         t.add_dims(int64_t{1} << 18);
         t.add_dims(int64_t{1} << 18);
         t.set_raw_data(std::string(4, '\0'));
         std::ofstream(d / "in.pb", std::ios::binary) << t.SerializeAsString();
         return "run " + example_pte(d).string() + " --input " + (d / "in.pb").string();
       },
       "dims 262144x262144 need 68719476736 elements, the data holds 1"},
      {"malformed flatbuffer",
       [](const fs::path& d) {
         auto b = read_all(example_pte(d));
         for (size_t i = 40; i < 200; i += 7) b[i] = static_cast<char>(~b[i]);
         write_all(d / "bad.pte", b);
         return "inspect " + (d / "bad.pte").string();
       },
       "flatbuffer verification failed"},
      {"offsets past the end",
       [](const fs::path& d) {
         auto b = read_all(example_pte(d));
         b.resize(3000);
         write_all(d / "cut.pte", b);
         return "run " + (d / "cut.pte").string() + " --random 1";
       },
       "exceeds file size 3000"},
      {"bad option value: shape",
       [](const fs::path& d) { return compile_args(kExample, d, "--input-shape image=1xAx32"); },
       "'A' is not a positive integer"},
      {"bad option value: texture limits",
       [](const fs::path& d) { return compile_args(kExample, d, "--input-shape image=1x3x32x32 --texture-limits 0,-1,5"); },
       "'0' is not a positive integer"},
      {"bad option value: cache length",
       [](const fs::path& d) { return compile_args(kExample, d, "--max-seq-len -4"); },
       "--max-seq-len -4: expected 1..1048576"},
      {"unwritable output path",
       [](const fs::path& d) { return "compile " + kExample.string() + " --input-shape image=1x3x32x32 -o " +
                                      (d / "no/such/dir/out.pte").string(); },
       "cannot create a temporary file"},
  };
  return r;
}

TEST(BadInputs, EveryRowIsOneErrorLineNonZeroExitAndNoOutput) {
  for (const Row& row : rows()) {
    SCOPED_TRACE(row.name);
    TempDir dir;
    const std::string args = row.make(dir.path());
    const CliResult r = run_vkc(args);
    EXPECT_NE(r.exit_code, 0) << args;
    EXPECT_EQ(r.err_lines(), 1u) << r.err;
    EXPECT_EQ(r.err.rfind("vkc: error: ", 0), 0u) << r.err;
    EXPECT_NE(r.err.find(row.needle), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(dir.path() / "out.pte"));
    for (const auto& e : fs::recursive_directory_iterator(dir.path()))  // no temporary left behind either
      EXPECT_EQ(e.path().filename().string().find(".tmp-"), std::string::npos) << e.path();
  }
}

TEST(BadInputs, FullDiskLeavesNoFile) {
  // A file-size limit stands in for a full disk: writes fail with EFBIG part way through.
  TempDir dir;
  const fs::path out = dir.path() / "full.pte";
  const std::string cmd = "/bin/sh -c \"trap '' XFSZ; ulimit -f 16; exec " + std::string(VKC_BINARY) + " compile " +
                          kExample.string() + " --input-shape image=1x3x32x32 --no-progress -o " + out.string() + "\"";
  const CliResult r = run_shell(cmd);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ(r.err_lines(), 1u) << r.err;
  EXPECT_NE(r.err.find("File too large"), std::string::npos) << r.err;
  EXPECT_TRUE(fs::is_empty(dir.path())) << "a partial or temporary file was left";
}

}  // namespace
}  // namespace vkc::test
