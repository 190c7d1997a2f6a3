// Sizes computed from shapes (tests/models/shape_arith/, made by export_shape_arith.py on the GPU
// machine): torch.onnx's interpolate-by-size (TorchScript and dynamo exporters), Pad amounts from
// a Mod of a dim, tf2onnx's Cast-to-float scaling with ConstantOfShape / Range / Expand of Shape, and
// each after onnxruntime's float16 converter. H and W are symbolic: compiled for a data set's sizes
// every node is delegated and onnxruntime's outputs come out on cpu and Vulkan; compiled for a
// range of sizes, the sizes that follow the dims affinely make one program that resizes, and the
// padding to a multiple (not affine) is refused naming its operator.
#include <gtest/gtest.h>

#include "decoder_test_util.h"

namespace vkc::test {
namespace {

const fs::path kDir = corpus("shape_arith");

class ShapeArithExport : public ::testing::TestWithParam<std::string> {};

double tolerance(const std::string& name) { return name.find("fp16") != std::string::npos ? 2e-2 : 1e-4; }

TEST_P(ShapeArithExport, EachSizeCompilesDelegatedAndMatchesOnnxruntime) {
  const fs::path dir = kDir / GetParam();
  for (const std::string set : {"test_data_set_0", "test_data_set_1"}) {
    const auto inputs = read_set(dir / set, "input");
    CompileOptions o;
    o.dims = dims_of_set(dir / "model.onnx", inputs);
    ASSERT_EQ(o.dims.size(), 2u) << "H and W are symbolic";
    expect_set_compiles_and_matches(dir, set, inputs, o, 1e-3, tolerance(GetParam()));
  }
}

TEST_P(ShapeArithExport, ARangeOfSizesIsOneProgramOrARefusalNamingWhy) {
  const fs::path dir = kDir / GetParam();
  CompileOptions o;
  o.dim_ranges["H"] = {8, 16};
  o.dim_ranges["W"] = {8, 24};
  const CompileResult r = compile(dir / "model.onnx", o);
  if (GetParam().rfind("pad_multiple", 0) == 0) {
    ASSERT_FALSE(r.ok);
    EXPECT_NE(r.error().find("aten.constant_pad_nd.default"), std::string::npos) << r.error();
    return;
  }
  ASSERT_TRUE(r.ok) << diags(r.diagnostics);
  expect_every_set_matches(dir, r.pte, 1e-3, tolerance(GetParam()));
}

INSTANTIATE_TEST_SUITE_P(Corpus, ShapeArithExport, ::testing::ValuesIn(subfolders(kDir)),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace vkc::test
