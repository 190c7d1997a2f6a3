// The in-scope conformance list (in_scope.txt): every case must compile, run on the cpu
// backend and match its expected outputs. Regenerate the list with the sweep
// (docs/conformance.md) when the compiler learns more.
#include <gtest/gtest.h>

#include <fstream>

#include "case_runner.h"

namespace vkc::conformance {
namespace {

const std::filesystem::path kData = "/usr/share/libonnx-testdata/data";

std::vector<std::string> in_scope() {
  std::vector<std::string> out;
  std::ifstream f(std::string(VKC_SOURCE_DIR) + "/tests/conformance/in_scope.txt");
  for (std::string line; std::getline(f, line);)
    if (!line.empty() && line[0] != '#') out.push_back(line);
  return out;
}

class InScope : public ::testing::TestWithParam<std::string> {};

TEST_P(InScope, PassesOnCpu) {
  const CaseResult r = run_case(kData / GetParam(), {});
  EXPECT_EQ(r.status, Status::Pass) << GetParam() << ": " << status_name(r.status) << ": " << r.detail;
}

INSTANTIATE_TEST_SUITE_P(Conformance, InScope, ::testing::ValuesIn(in_scope()), [](const auto& info) {
  std::string name = info.param;
  for (char& ch : name)
    if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return name;
});

TEST(InScopeList, IsNotEmpty) { EXPECT_GT(in_scope().size(), 50u); }

}  // namespace
}  // namespace vkc::conformance
