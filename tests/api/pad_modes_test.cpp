// Pad's reflect, edge and wrap modes (index_select per padded dim with constant source indices)
// against their definitions written out by hand, on cpu and Vulkan.
#include <gtest/gtest.h>

#include "api_test_support.h"
#include "vkc/runtime/vulkan.h"

namespace vkc::test {
namespace {

// y = Pad(x [2, 4], pads) with `mode`; pads as ONNX orders them (begins, then ends).
std::vector<uint8_t> pad_model(const std::string& mode, const std::vector<int64_t>& pads, std::vector<int64_t> out) {
  ModelBuilder b(8, 13);
  b.input("x", kF32, {2, 4});
  b.output("y", kF32, std::vector<DimSpec>(out.begin(), out.end()));
  auto* p = b.initializer("pads", onnx::TensorProto_DataType_INT64, {static_cast<int64_t>(pads.size())});
  for (int64_t v : pads) p->add_int64_data(v);
  attr_string(b.node("Pad", {"x", "pads"}, {"y"}, "pad"), "mode", mode);
  return b.bytes();
}

TEST(PadModes, ReflectEdgeAndWrapMatchTheirDefinitions) {
  const std::vector<float> x = {1, 2, 3, 4, 5, 6, 7, 8};  // rows 1 2 3 4 / 5 6 7 8
  struct Case {
    std::string mode;
    std::vector<int64_t> pads, out;
    std::vector<float> want;
  };
  const std::vector<Case> cases = {
      // last dim, 2 before and 1 after: reflect mirrors without repeating the edge
      {"reflect", {0, 2, 0, 1}, {2, 7}, {3, 2, 1, 2, 3, 4, 3, 7, 6, 5, 6, 7, 8, 7}},
      // both dims: edge repeats the border rows and columns
      {"edge", {1, 1, 0, 2}, {3, 7}, {1, 1, 2, 3, 4, 4, 4, 1, 1, 2, 3, 4, 4, 4, 5, 5, 6, 7, 8, 8, 8}},
      // wrap: the row continues periodically, further than one period on the right
      {"wrap", {0, 1, 0, 5}, {2, 10}, {4, 1, 2, 3, 4, 1, 2, 3, 4, 1, 8, 5, 6, 7, 8, 5, 6, 7, 8, 5}},
  };
  std::vector<std::string> backends = {"cpu"};
  if (!runtime::vulkan_device_name().empty()) backends.push_back("vulkan");
  for (const Case& c : cases) {
    SCOPED_TRACE(c.mode);
    const CompileResult r = compile(pad_model(c.mode, c.pads, c.out), fs::path(), CompileOptions{});
    ASSERT_TRUE(r) << r.error();
    EXPECT_EQ(r.partition.rejected, 0u);
    for (const std::string& backend : backends) {
      RunOptions o;
      o.backend = backend;
      const RunResult out = vkc::run(r.pte, {Tensor::of(ir::DType::Float32, {2, 4}, x)}, o);
      ASSERT_TRUE(out) << backend << ": " << describe(out.diagnostics);
      ASSERT_EQ(out.outputs.at(0).shape, c.out) << backend;
      for (size_t i = 0; i < c.want.size(); ++i)
        EXPECT_EQ(out.outputs.at(0).get_f(static_cast<int64_t>(i)), c.want[i]) << backend << " " << i;
    }
  }
}

TEST(PadModes, AnUnknownModeIsRefusedWithItsName) {
  const CompileResult r = compile(pad_model("mirror", {0, 1, 0, 1}, {2, 6}), fs::path(), CompileOptions{});
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().find("mirror"), std::string::npos) << r.error();
}

}  // namespace
}  // namespace vkc::test
