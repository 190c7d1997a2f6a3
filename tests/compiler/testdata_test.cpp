// Debian's libonnx-testdata conformance models: a fixed in-scope list must compile
// to a single called Vulkan delegate holding the expected operator; out-of-scope
// models must fail with the reason named.
#include <gtest/gtest.h>

#include "onnx_test_models.h"
#include "vkc/compiler/driver.h"
#include "vkc/compiler/inspect.h"

namespace vkc::test {
namespace {

const fs::path kData = "/usr/share/libonnx-testdata/data";

struct Case {
  const char* model;    // relative to kData
  const char* op;       // a runtime operator the delegate must call
};

class TestdataCompiles : public ::testing::TestWithParam<Case> {};

TEST_P(TestdataCompiles, ToOneCalledVulkanDelegate) {
  const Case c = GetParam();
  TempDir dir;
  const fs::path out = dir / "m.pte";
  ASSERT_NO_THROW(compiler::compile_file(kData / c.model / "model.onnx", out, {})) << c.model;
  const compiler::InspectReport r = compiler::inspect_file(out);
  ASSERT_EQ(r.delegates.size(), 1u);
  EXPECT_TRUE(r.delegates[0].called);
  EXPECT_EQ(r.delegates[0].backend, "VulkanBackend");
  EXPECT_GE(r.delegates[0].ops.count(c.op), 1u) << c.model << " lacks " << c.op;
}

INSTANTIATE_TEST_SUITE_P(
    Conformance, TestdataCompiles,
    ::testing::Values(Case{"node/test_add_bcast", "aten.add.Tensor"},
                      Case{"node/test_averagepool_2d_pads_count_include_pad", "aten.avg_pool2d.default"},
                      Case{"node/test_averagepool_2d_precomputed_same_upper", "aten.avg_pool2d.default"},
                      Case{"node/test_clip_default_inbounds", "aten.clamp.default"},
                      Case{"node/test_concat_3d_axis_negative_2", "aten.cat.default"},
                      Case{"node/test_div_bcast", "aten.div.Tensor"},
                      Case{"node/test_flatten_negative_axis2", "aten.view_copy.default"},
                      Case{"node/test_gemm_default_no_bias", "aten.mm.default"},
                      Case{"node/test_globalaveragepool", "aten.mean.dim"},
                      Case{"node/test_hardsigmoid", "aten.clamp.default"},
                      Case{"node/test_hardsigmoid_default", "aten.hardsigmoid.default"},
                      Case{"node/test_hardswish_expanded", "aten.hardsigmoid.default"},
                      Case{"node/test_matmul_3d", "aten.bmm.default"},
                      Case{"node/test_maxpool_2d_precomputed_same_upper", "aten.max_pool2d_with_indices.default"},
                      Case{"node/test_reshape_negative_extended_dims", "aten.view_copy.default"},
                      Case{"node/test_softmax_axis_1", "aten._softmax.default"},
                      Case{"pytorch-converted/test_BatchNorm2d_eval",
                           "aten._native_batch_norm_legit_no_training.default"},
                      Case{"pytorch-converted/test_ConvTranspose2d", "aten.convolution.default"},
                      Case{"pytorch-converted/test_Linear", "aten.linear.default"},
                      Case{"pytorch-converted/test_MaxPool2d_stride_padding_dilation",
                           "aten.max_pool2d_with_indices.default"},
                      Case{"pytorch-operator/test_operator_concat2", "aten.cat.default"},
                      Case{"simple/test_single_relu_model", "aten.relu.default"}),
    [](const auto& info) {
      std::string name = info.param.model;
      for (char& ch : name)
        if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
      return name;
    });

struct Rejected {
  const char* model;
  const char* reason;  // part of the one-line error
};

class TestdataRejected : public ::testing::TestWithParam<Rejected> {};

TEST_P(TestdataRejected, WithTheReasonNamed) {
  const Rejected c = GetParam();
  TempDir dir;
  try {
    compiler::compile_file(kData / c.model / "model.onnx", dir / "m.pte", {});
    FAIL() << c.model << " compiled";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find(c.reason), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(dir / "m.pte"));
}

INSTANTIATE_TEST_SUITE_P(
    Conformance, TestdataRejected,
    ::testing::Values(Rejected{"node/test_erf", "no Vulkan lowering for Erf"},
                      Rejected{"node/test_basic_conv_with_padding", "weight is not a constant"},
                      Rejected{"node/test_maxpool_2d_uint8", "dtype u8"},
                      Rejected{"pytorch-operator/test_operator_add_size1_singleton_broadcast", "dtype f64"},
                      Rejected{"node/test_conv_with_autopad_same", "weight is not a constant"}),
    [](const auto& info) {
      std::string name = info.param.model;
      for (char& ch : name)
        if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
      return name;
    });

}  // namespace
}  // namespace vkc::test
