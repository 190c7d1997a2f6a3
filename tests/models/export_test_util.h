// Helpers shared by the tests over real exporter and quantizer output (tests/models/): the ONNX
// test-data layout, compile diagnostics, running a program on a backend, comparing outputs.
#pragma once

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tensor_file.h"
#include "vkc/runtime/compare.h"
#include "vkc/runtime/vulkan.h"
#include "vkc/vkc.h"

namespace vkc::test {
namespace fs = std::filesystem;

/// A test over every folder of an export corpus (tests/models/<name>/), one test per folder.
using ExportTest = ::testing::TestWithParam<std::string>;
inline fs::path corpus(const char* name) { return fs::path(VKC_SOURCE_DIR) / "tests/models" / name; }
/// Instantiates `Suite` (an ExportTest) over the folders of `dir`, each test named after its folder.
#define VKC_EXPORT_CORPUS(Suite, dir)                                           \
  INSTANTIATE_TEST_SUITE_P(Corpus, Suite, ::testing::ValuesIn(subfolders(dir)), \
                           [](const ::testing::TestParamInfo<std::string>& p) { return p.param; })

/// cpu, and vulkan where a device exists (lavapipe in CI).
inline std::vector<std::string> backends() {
  std::vector<std::string> b = {"cpu"};
  if (!runtime::vulkan_device_name().empty()) b.push_back("vulkan");
  return b;
}

/// DIR/<prefix>_<i>.pb for i = 0, 1, ... (the ONNX test-data layout).
inline std::vector<Tensor> read_set(const fs::path& dir, const char* prefix) {
  std::vector<Tensor> out;
  for (int i = 0;; ++i) {
    const fs::path p = dir / (std::string(prefix) + "_" + std::to_string(i) + ".pb");
    if (!fs::exists(p)) break;
    std::ifstream f(p, std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    onnx::TensorProto t;
    if (!t.ParseFromString(ss.str())) throw std::runtime_error(p.string() + " is not a TensorProto");
    out.push_back(tools::tensor_from_proto(t));
  }
  return out;
}

inline std::string diags(const std::vector<Diagnostic>& ds) {
  std::string s;
  for (const auto& d : ds) s += d.str() + "\n";
  return s;
}

inline std::vector<Tensor> run_pte(const std::vector<uint8_t>& pte, const std::vector<Tensor>& inputs, const std::string& backend) {
  RunOptions ro;
  ro.backend = backend;
  RunResult r = run(std::span<const uint8_t>(pte), inputs, ro);
  EXPECT_TRUE(r.ok) << diags(r.diagnostics);
  return r.outputs;
}

/// Every output within rtol, atol (default 1e-3, 1e-4) of the expected one.
inline void expect_close(const std::vector<Tensor>& got, const std::vector<Tensor>& want, const std::string& what,
                         double rtol = 1e-3, double atol = 1e-4) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    const runtime::Comparison c = runtime::compare(got[i], want[i], rtol, atol);
    EXPECT_TRUE(c.pass()) << what << " output " << i << ": max abs " << c.max_abs << ", " << c.mismatches
                          << " mismatch(es)";
  }
}

/// The sub-folders of `dir` (one export each) whose names contain `contains`, sorted.
inline std::vector<std::string> subfolders(const fs::path& dir, const std::string& contains = "") {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_directory() && e.path().filename().string().find(contains) != std::string::npos)
      out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

/// The program's runtime operators; every node must be delegated.
inline std::set<std::string> ops_of(const CompileResult& r) {
  std::set<std::string> ops;
  for (const auto& n : r.partition.nodes) {
    EXPECT_GE(n.delegate, 0) << n.name << " (" << n.op << ") left out: " << n.reason;
    ops.insert(n.op);
  }
  return ops;
}

/// An export folder (model.onnx, test_data_set_0/ ...) compiled (default options unless given).
struct CompiledExport {
  CompileResult result;
  std::set<std::string> ops;  // the runtime operators (every node checked delegated)
};
/// Fills `c` from `dir`; a fatal failure (check HasFatalFailure()) when the data set is missing or the
/// compile fails; a failure for each node left out of every delegate.
inline void compile_export(const fs::path& dir, CompiledExport& c, const CompileOptions& options = {}) {
  ASSERT_FALSE(read_set(dir / "test_data_set_0", "input").empty()) << dir;
  ASSERT_FALSE(read_set(dir / "test_data_set_0", "output").empty()) << dir;
  c.result = compile(dir / "model.onnx", options);
  ASSERT_TRUE(c.result.ok) << dir.filename() << ": " << diags(c.result.diagnostics);
  c.ops = ops_of(c.result);
}

/// Runs `pte` on every data set of `dir` (test_data_set_0, _1, ...) on every backend and checks
/// the outputs within rtol, atol; returns each set's first output shape, in order.
inline std::vector<std::vector<int64_t>> expect_every_set_matches(const fs::path& dir, const std::vector<uint8_t>& pte,
                                                                  double rtol = 1e-3, double atol = 1e-4) {
  std::vector<std::vector<int64_t>> shapes;
  for (size_t i = 0;; ++i) {
    const fs::path set = dir / ("test_data_set_" + std::to_string(i));
    if (!fs::exists(set)) break;
    const auto inputs = read_set(set, "input");
    const auto want = read_set(set, "output");
    shapes.push_back(want.at(0).shape);
    for (const std::string& b : backends())
      expect_close(run_pte(pte, inputs, b), want,
                   dir.filename().string() + " set " + std::to_string(i) + " on " + b, rtol, atol);
  }
  return shapes;
}

/// `pte` opened on `backend` (a failure names the diagnostics; check s.ok()).
inline Session open_on(const std::vector<uint8_t>& pte, const std::string& backend) {
  RunOptions ro;
  ro.backend = backend;
  Session s = Session::open(std::span<const uint8_t>(pte), ro);
  EXPECT_TRUE(s.ok()) << diags(s.diagnostics());
  return s;
}

/// Opens the KV-cache program `pte` on every backend and checks that it takes tokens and input_pos
/// only (the caches inside) and that greedy generation from `prompt` gives `want`.
/// `gpu_kernels_too`: on vulkan also with the kernels a GPU would choose (VKC_VULKAN_GPU_KERNELS=1
/// makes lavapipe choose as one: the matrix-vector linears, the workgroup norms).
inline void expect_generates(const std::vector<uint8_t>& pte, const std::vector<int64_t>& prompt,
                             const std::vector<int64_t>& want, bool gpu_kernels_too = false) {
  for (const std::string& b : backends())
    for (const char* gpu_kernels : {"0", "1"}) {
      if (gpu_kernels[0] == '1' && (b != "vulkan" || !gpu_kernels_too)) continue;
      ::setenv("VKC_VULKAN_GPU_KERNELS", gpu_kernels, 1);
      RunOptions ro;
      ro.backend = b;
      Session s = Session::open(std::span<const uint8_t>(pte), ro);
      ASSERT_TRUE(s.ok()) << diags(s.diagnostics());
      ASSERT_EQ(s.inputs().size(), 2u);  // tokens and input_pos: the caches are inside
      const GenerateResult g = s.generate(prompt, want.size());
      ::unsetenv("VKC_VULKAN_GPU_KERNELS");
      ASSERT_TRUE(g.ok) << diags(g.diagnostics);
      EXPECT_EQ(g.tokens, want) << "on " << b << (gpu_kernels[0] == '1' ? " with GPU kernels" : "");
      // One-token steps on the GPU run as a loop there (runtime/generate.h).
      bool one_token = false;
      for (const auto& in : s.inputs()) one_token = one_token || (in.shape.size() == 2 && (in.shape[1] == 1 || in.dynamic));
      EXPECT_EQ(g.device_loop, b == "vulkan" && one_token && want.size() > 1) << "on " << b;
    }
}

}  // namespace vkc::test
