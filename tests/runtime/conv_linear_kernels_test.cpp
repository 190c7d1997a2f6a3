// Convolution and matrix-product kernels against hand-computed values.
#include <gtest/gtest.h>

#include "test_util.h"
#include "vkc/kernels/conv.h"
#include "vkc/kernels/linear.h"

namespace vkc::kernels {
namespace {

using test::f32;
using test::near;
using test::Shape;
using test::values;

const HostTensor k3x3 = f32({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});

TEST(ConvKernel, DiagonalWeightAndBias) {
  const HostTensor w = f32({1, 1, 2, 2}, {1, 0, 0, 1});
  EXPECT_THAT(values(convolution(k3x3, w, nullptr, {})), near({6, 8, 12, 14}));
  const HostTensor b = f32({1}, {1});
  const HostTensor r = convolution(k3x3, w, &b, {});
  EXPECT_EQ(r.shape, (Shape{1, 1, 2, 2}));
  EXPECT_THAT(values(r), near({7, 9, 13, 15}));
}

TEST(ConvKernel, PaddingStrideDilation) {
  ConvParams p;
  p.stride = {2};
  p.padding = {1, 1};
  const HostTensor ones3 = f32({1, 1, 3, 3}, std::vector<float>(9, 1));
  EXPECT_THAT(values(convolution(k3x3, ones3, nullptr, p)), near({12, 16, 24, 28}));
  ConvParams d;
  d.dilation = {2, 2};
  const HostTensor r = convolution(k3x3, f32({1, 1, 2, 2}, {1, 1, 1, 1}), nullptr, d);
  EXPECT_EQ(r.shape, (Shape{1, 1, 1, 1}));
  EXPECT_THAT(values(r), near({20}));
}

TEST(ConvKernel, GroupsKeepChannelsApart) {
  ConvParams p;
  p.groups = 2;
  const HostTensor x = f32({1, 2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
  EXPECT_THAT(values(convolution(x, f32({2, 1, 1, 1}, {2, 3}), nullptr, p)), near({2, 4, 6, 8, 15, 18, 21, 24}));
  // Two output channels per group from one input channel each.
  const HostTensor r = convolution(x, f32({4, 1, 1, 1}, {1, -1, 2, 0}), nullptr, p);
  EXPECT_EQ(r.shape, (Shape{1, 4, 2, 2}));
  EXPECT_THAT(values(r), near({1, 2, 3, 4, -1, -2, -3, -4, 10, 12, 14, 16, 0, 0, 0, 0}));
}

TEST(ConvKernel, OneDimensionalOddLength) {
  ConvParams p;
  p.stride = {2};
  p.padding = {1};
  const HostTensor r = convolution(f32({1, 1, 5}, {1, 2, 3, 4, 5}), f32({1, 1, 3}, {1, 2, 3}), nullptr, p);
  EXPECT_EQ(r.shape, (Shape{1, 1, 3}));
  EXPECT_THAT(values(r), near({8, 20, 14}));
}

TEST(ConvKernel, Transposed) {
  const HostTensor x = f32({1, 1, 2, 2}, {1, 2, 3, 4});
  const HostTensor ones = f32({1, 1, 2, 2}, {1, 1, 1, 1});
  ConvParams p;
  p.transposed = true;
  EXPECT_THAT(values(convolution(x, ones, nullptr, p)), near({1, 3, 2, 4, 10, 6, 3, 7, 4}));
  p.stride = {2, 2};
  EXPECT_THAT(values(convolution(x, ones, nullptr, p)), near({1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4}));
  // Padding crops the full result; output_padding adds a row and column at the end.
  p.padding = {1, 1};
  p.output_padding = {1, 1};
  const HostTensor r = convolution(x, ones, nullptr, p);
  EXPECT_EQ(r.shape, (Shape{1, 1, 3, 3}));
  EXPECT_THAT(values(r), near({1, 2, 2, 3, 4, 4, 3, 4, 4}));
}

TEST(ConvKernel, TransposedGroups) {
  ConvParams p;
  p.transposed = true;
  p.groups = 2;
  // weight [Cin, Cout/groups, 1, 1]
  EXPECT_THAT(values(convolution(f32({1, 2, 1, 1}, {1, 2}), f32({2, 1, 1, 1}, {3, 4}), nullptr, p)), near({3, 8}));
}

TEST(ConvKernel, RejectsMismatchedWeights) {
  EXPECT_THROW(convolution(k3x3, f32({1, 2, 1, 1}, {1, 1}), nullptr, {}), KernelError);
  EXPECT_THROW(convolution(k3x3, f32({1, 1, 1}, {1}), nullptr, {}), KernelError);
}

TEST(LinearKernel, WeightTransposedPlusBias) {
  const HostTensor x = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  const HostTensor w = f32({2, 3}, {1, 0, 1, 0, 1, 0});
  const HostTensor b = f32({2}, {10, 20});
  EXPECT_THAT(values(linear(x, w, &b)), near({14, 22, 20, 25}));
  const HostTensor b1 = f32({1}, {1});
  EXPECT_THAT(values(linear(x, w, &b1)), near({5, 3, 11, 6}));
  const HostTensor r = linear(f32({1, 1, 3}, {1, 1, 1}), w, nullptr);
  EXPECT_EQ(r.shape, (Shape{1, 1, 2}));
  EXPECT_THAT(values(r), near({2, 1}));
}

TEST(LinearKernel, MatmulAndBatches) {
  EXPECT_THAT(values(matmul(f32({2, 3}, {1, 2, 3, 4, 5, 6}), f32({3, 1}, {1, 0, -1}))), near({-2, -2}));
  const HostTensor r = matmul(f32({2, 1, 2}, {1, 2, 3, 4}), f32({2, 2, 1}, {1, 1, 2, 0}));
  EXPECT_EQ(r.shape, (Shape{2, 1, 1}));
  EXPECT_THAT(values(r), near({3, 6}));
  EXPECT_THROW(matmul(f32({2, 3}, std::vector<float>(6)), f32({2, 3}, std::vector<float>(6))), KernelError);
}

TEST(LinearKernel, AddmmScalesBoth) {
  const HostTensor r = addmm(f32({2}, {1, 2}), f32({1, 2}, {1, 1}), f32({2, 2}, {1, 2, 3, 4}), 2.0, 0.5);
  EXPECT_EQ(r.shape, (Shape{1, 2}));
  EXPECT_THAT(values(r), near({4, 7}));
}

}  // namespace
}  // namespace vkc::kernels
