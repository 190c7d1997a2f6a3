// One ONNX backend test case (model.onnx + test_data_set_0/{input,output}_*.pb): fold weight
// inputs into constants, compile in memory, run on a runtime backend, compare.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace vkc::conformance {

enum class Status { Pass, Fail, Unsupported };
const char* status_name(Status s);

struct CaseResult {
  std::string folder, name;        // "node", "test_add_bcast"
  Status status = Status::Unsupported;
  std::string detail;              // fail: the max errors or runtime error; unsupported: the compile error
  std::vector<std::string> ops;    // ONNX op types in the model, sorted, distinct
  std::vector<std::string> folded; // graph inputs turned into constants
  bool compiled = false;           // false: the failure came before or while compiling
  double max_abs = 0, max_rel = 0;
  double seconds = 0;
};

struct CaseOptions {
  std::string backend = "cpu";
  double rtol = 1e-3, atol = 1e-4;
};

/// Runs the case in directory `dir` (folder/name are taken from its last two path parts).
/// Never throws: every failure is a result.
CaseResult run_case(const std::filesystem::path& dir, const CaseOptions& options);

}  // namespace vkc::conformance
