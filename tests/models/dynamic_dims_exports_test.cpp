// The symbolic-dim part of the real-exporter corpus (tests/models/dynamic_dims/, made by
// export_dynamic_dims.py on the GPU machine): models whose inputs keep named dynamic dims as
// PyTorch's exporters write them (BERT with a dynamic sequence from the TorchScript and dynamo
// exporters, a CNN with dynamic height and width). Each is compiled once for the sizes its data
// sets have (--dim NAME=V1,V2,... for each symbolic dim; a dim with one size is fixed), every node
// delegated, and that one program computes onnxruntime's outputs of each set on cpu and (where
// present) Vulkan, picking its variant by the inputs' shapes.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <fstream>

#include "export_test_util.h"
#include "onnx/onnx_pb.h"

namespace vkc::test {
namespace {

const fs::path kDir = corpus("dynamic_dims");

// Each symbolic input dim of the model, with the sizes the data sets give it (in set order).
std::map<std::string, std::vector<int64_t>> sizes_in_sets(const fs::path& dir) {
  onnx::ModelProto model;
  std::ifstream f(dir / "model.onnx", std::ios::binary);
  EXPECT_TRUE(model.ParseFromIstream(&f)) << dir;
  std::map<std::string, std::vector<int64_t>> sizes;
  for (size_t i = 0;; ++i) {
    const fs::path set = dir / ("test_data_set_" + std::to_string(i));
    if (!fs::exists(set)) break;
    const auto inputs = read_set(set, "input");
    for (int k = 0; k < model.graph().input_size() && static_cast<size_t>(k) < inputs.size(); ++k) {
      const auto& shape = model.graph().input(k).type().tensor_type().shape();
      for (int d = 0; d < shape.dim_size(); ++d) {
        if (!shape.dim(d).has_dim_param()) continue;
        auto& list = sizes[shape.dim(d).dim_param()];
        const int64_t v = inputs[k].shape.at(d);
        if (std::find(list.begin(), list.end(), v) == list.end()) list.push_back(v);
      }
    }
  }
  return sizes;
}

using DynamicDimsExport = ExportTest;

TEST_P(DynamicDimsExport, OneProgramTakesEverySizeAndMatchesOnnxruntime) {
  const fs::path dir = kDir / GetParam();
  CompileOptions o;
  size_t variants = 1;
  for (const auto& [name, list] : sizes_in_sets(dir)) {
    if (list.size() == 1) o.dims[name] = list[0];
    else o.dim_sizes[name] = list;
    variants *= list.size();
  }
  ASSERT_GE(variants, 2u) << "the data sets cover several sizes";
  CompiledExport c;
  compile_export(dir, c, o);  // every node delegated
  if (HasFatalFailure()) return;
  ASSERT_FALSE(c.result.diagnostics.empty());
  EXPECT_NE(c.result.diagnostics[0].message.find(fmt::format("holds {} variants", variants)), std::string::npos)
      << c.result.diagnostics[0].message;
  expect_every_set_matches(dir, c.result.pte);
}

// The same models compiled for a range of each dim's sizes (--dim NAME=1..MAX, MAX the largest
// size in the sets): one program whose graph resizes as it runs. The transformers take it; the
// CNN is refused with the reason (a strided convolution's output size is not affine in its input's).
TEST_P(DynamicDimsExport, ARangeOfSizesIsOneProgramThatResizes) {
  const fs::path dir = kDir / GetParam();
  CompileOptions o;
  for (const auto& [name, list] : sizes_in_sets(dir)) {
    if (list.size() == 1) o.dims[name] = list[0];
    else o.dim_ranges[name] = {1, *std::max_element(list.begin(), list.end())};
  }
  if (GetParam().rfind("mnv3", 0) == 0) {
    const CompileResult r = compile(dir / "model.onnx", fs::path(), o);
    EXPECT_FALSE(r.ok);
    EXPECT_NE(r.error().find("aten.convolution.default) is"), std::string::npos) << r.error();
    EXPECT_NE(r.error().find("not an affine function of the dims"), std::string::npos) << r.error();
    return;
  }
  CompiledExport c;
  compile_export(dir, c, o);  // every node delegated
  if (HasFatalFailure()) return;
  ASSERT_FALSE(c.result.diagnostics.empty());
  EXPECT_NE(c.result.diagnostics[0].message.find("one program that resizes as it runs"), std::string::npos)
      << c.result.diagnostics[0].message;
  const InspectResult info = inspect(std::span<const uint8_t>(c.result.pte));
  ASSERT_TRUE(info.ok);
  EXPECT_EQ(info.report.plans.at(0).delegate_calls, 1u);
  expect_every_set_matches(dir, c.result.pte);
}

VKC_EXPORT_CORPUS(DynamicDimsExport, kDir);

}  // namespace
}  // namespace vkc::test
