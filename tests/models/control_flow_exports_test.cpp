// The control-flow part of the real-exporter corpus (tests/models/control_flow/, made by
// export_control_flow.py on the GPU machine): scripted torch modules whose `if` is decided at run
// time over branches of different shapes, as PyTorch's TorchScript exporter writes them (an ONNX If
// on a computed or an input condition, one nested in another). Every one compiles into a program
// that picks its compiled branch as it runs, every node delegated, and computes onnxruntime's
// outputs of that very file for each data set (each takes another branch) on cpu and (where
// present) Vulkan.
#include <gtest/gtest.h>

#include "export_test_util.h"
#include "vkc/serializer/pte_reader.h"

namespace vkc::test {
namespace {

const fs::path kDir = corpus("control_flow");

using ControlFlowExport = ExportTest;

TEST_P(ControlFlowExport, PicksTheBranchAsItRunsAndMatchesOnnxruntimeOnEveryBranch) {
  const std::string name = GetParam();
  CompiledExport c;
  compile_export(kDir / name, c);  // every node delegated
  if (HasFatalFailure()) return;
  const CompileResult& r = c.result;
  const auto file = serializer::read_pte_bytes(std::span<const uint8_t>(r.pte));
  size_t jumps = 0;
  for (const auto& instr : file.program.plans.at(0).instructions)
    jumps += std::holds_alternative<serializer::JumpFalseCall>(instr);
  EXPECT_GE(jumps, 2u) << "a run-time If keeps its jumps";
  if (name == "nested") {
    // The outer condition is bound first: the inner If only exists in its then branch, so three
    // programs (not four) cover the combinations.
    ASSERT_FALSE(r.diagnostics.empty());
    EXPECT_NE(r.diagnostics[0].message.find("holds 3 compiled variants"), std::string::npos) << r.diagnostics[0].message;
  }
  const auto shapes = expect_every_set_matches(kDir / name, r.pte);
  EXPECT_GE(shapes.size(), 2u);
  EXPECT_GE(std::set<std::vector<int64_t>>(shapes.begin(), shapes.end()).size(), 2u)
      << "the data sets take branches of different shapes";
}

VKC_EXPORT_CORPUS(ControlFlowExport, kDir);

}  // namespace
}  // namespace vkc::test
