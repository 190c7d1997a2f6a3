// Pooling, softmax, normalization, resizing, activation and padding kernels against
// hand-computed values.
#include <gtest/gtest.h>

#include <cmath>

#include "test_util.h"
#include "vkc/kernels/activation.h"
#include "vkc/kernels/norm.h"
#include "vkc/kernels/pool.h"
#include "vkc/kernels/shape_ops.h"
#include "vkc/kernels/softmax.h"
#include "vkc/kernels/upsample.h"

namespace vkc::kernels {
namespace {

using test::f32;
using test::near;
using test::Shape;
using test::values;

const HostTensor k3x3 = f32({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});

PoolParams pool(int64_t k, int64_t s, int64_t pad = 0, bool ceil = false) {
  PoolParams p;
  p.kernel[0] = p.kernel[1] = k;
  p.stride[0] = p.stride[1] = s;
  p.padding[0] = p.padding[1] = pad;
  p.ceil_mode = ceil;
  return p;
}

TEST(PoolKernel, OutputSizeAsAten) {
  EXPECT_EQ(pool_output_size(3, 2, 0, 2, 1, false), 1);
  EXPECT_EQ(pool_output_size(3, 2, 0, 2, 1, true), 2);
  // ceil mode: the last window would start in the right padding, so it is dropped.
  EXPECT_EQ(pool_output_size(5, 2, 1, 2, 1, true), 3);
  EXPECT_EQ(pool_output_size(7, 3, 0, 1, 2, false), 3);
}

TEST(PoolKernel, MaxValuesAndIndices) {
  MaxPoolResult r = max_pool2d(k3x3, pool(2, 1));
  EXPECT_THAT(values(r.values), near({5, 6, 8, 9}));
  EXPECT_EQ(r.indices.dtype, ir::DType::Int64);
  EXPECT_EQ(r.indices.ints(), (std::vector<int64_t>{4, 5, 7, 8}));
  r = max_pool2d(k3x3, pool(3, 2, 1));
  EXPECT_THAT(values(r.values), near({5, 6, 8, 9}));
  r = max_pool2d(k3x3, pool(2, 2, 0, true));
  EXPECT_EQ(r.values.shape, (Shape{1, 1, 2, 2}));
  EXPECT_THAT(values(r.values), near({5, 6, 8, 9}));
  PoolParams d = pool(2, 1);
  d.dilation[0] = d.dilation[1] = 2;
  r = max_pool2d(f32({1, 1, 3, 3}, {9, 0, 1, 0, 0, 0, 2, 0, 3}), d);
  EXPECT_THAT(values(r.values), near({9}));
  EXPECT_EQ(r.indices.ints(), (std::vector<int64_t>{0}));
}

TEST(PoolKernel, AverageDivisors) {
  EXPECT_THAT(values(avg_pool2d(k3x3, pool(2, 1), true, std::nullopt)), near({3, 4, 6, 7}));
  // Window [-1, 1] x [-1, 1]: 4 real elements summing to 12, 9 with padding.
  EXPECT_NEAR(avg_pool2d(k3x3, pool(3, 2, 1), true, std::nullopt).get_f(0), 12.0 / 9, 1e-6);
  EXPECT_NEAR(avg_pool2d(k3x3, pool(3, 2, 1), false, std::nullopt).get_f(0), 3, 1e-6);
  EXPECT_NEAR(avg_pool2d(k3x3, pool(3, 2, 1), true, 2).get_f(0), 6, 1e-6);
  // ceil mode: windows past the input are clipped, and their overhang is never counted.
  EXPECT_THAT(values(avg_pool2d(k3x3, pool(2, 2, 0, true), true, std::nullopt)), near({3, 4.5, 7.5, 9}));
}

TEST(SoftmaxKernel, AlongAnAxis) {
  const double e1 = std::exp(1.0), e2 = std::exp(2.0), s = 1 + e1 + e2;
  EXPECT_THAT(values(softmax(f32({3}, {1, 2, 3}), 0)), near({1 / s, e1 / s, e2 / s}));
  // axis 0 of [2, 2]: columns
  EXPECT_THAT(values(softmax(f32({2, 2}, {0, 5, 0, 5}), 0)), near({0.5, 0.5, 0.5, 0.5}));
  EXPECT_THAT(values(log_softmax(f32({2}, {0, 0}), -1)), near({-std::log(2.0), -std::log(2.0)}));
  // large magnitudes do not overflow
  EXPECT_THAT(values(log_softmax(f32({2}, {1000, 0}), 0)), near({0, -1000}));
}

TEST(NormKernel, LayerNormOutputsAndStatistics) {
  const HostTensor w = f32({2}, {2, 1}), b = f32({2}, {0, 1});
  LayerNormResult r = layer_norm(f32({2, 2}, {1, 3, 2, 2}), 1, &w, &b, 1e-5);
  EXPECT_THAT(values(r.out), near({-2, 2, 0, 1}));
  EXPECT_EQ(r.mean.shape, (Shape{2, 1}));
  EXPECT_THAT(values(r.mean), near({2, 2}));
  EXPECT_NEAR(r.rstd.get_f(0), 1, 1e-4);
}

TEST(NormKernel, BatchAndGroupNorm) {
  const HostTensor w = f32({2}, {1, 2}), b = f32({2}, {0, 1});
  const HostTensor x = f32({1, 2, 1, 2}, {1, 2, 3, 4});
  EXPECT_THAT(values(batch_norm(x, &w, &b, f32({2}, {1, 3}), f32({2}, {4, 1}), 0)), near({0, 0.5, 1, 3}));
  GroupNormResult g = group_norm(f32({1, 4, 1, 1}, {1, 2, 3, 4}), nullptr, nullptr, 2, 0);
  EXPECT_THAT(values(g.out), near({-1, 1, -1, 1}));
  EXPECT_THAT(values(g.mean), near({1.5, 3.5}));
  EXPECT_EQ(g.rstd.shape, (Shape{1, 2}));
}

TEST(UpsampleKernel, NearestFromSizesAndScales) {
  const HostTensor x = f32({1, 1, 2, 2}, {1, 2, 3, 4});
  const auto by_scale = upsample_target(x.shape, std::nullopt, std::vector<double>{2, 2});
  EXPECT_EQ(by_scale.out_h, 4);
  EXPECT_THAT(values(upsample_nearest2d(x, by_scale)), near({1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4}));
  const auto by_size = upsample_target(x.shape, std::vector<int64_t>{3, 3}, std::nullopt);
  EXPECT_THAT(values(upsample_nearest2d(x, by_size)), near({1, 1, 2, 1, 1, 2, 3, 3, 4}));
  EXPECT_THROW(upsample_target(x.shape, std::nullopt, std::nullopt), KernelError);
}

TEST(UpsampleKernel, Bilinear) {
  const HostTensor x = f32({1, 1, 2, 2}, {1, 2, 3, 4});
  const auto t3 = upsample_target(x.shape, std::vector<int64_t>{3, 3}, std::nullopt);
  EXPECT_THAT(values(upsample_bilinear2d(x, t3, true)), near({1, 1.5, 2, 2, 2.5, 3, 3, 3.5, 4}));
  // half-pixel: source coordinates 0, 0.25, 0.75, 1 (the first clamped at 0, the last at the edge)
  const auto t4 = upsample_target(x.shape, std::nullopt, std::vector<double>{2, 2});
  EXPECT_THAT(values(upsample_bilinear2d(x, t4, false)),
              near({1, 1.25, 1.75, 2, 1.5, 1.75, 2.25, 2.5, 2.5, 2.75, 3.25, 3.5, 3, 3.25, 3.75, 4}));
}

TEST(ActivationKernel, Values) {
  const HostTensor x = f32({5}, {-4, -1, 0, 1, 4});
  EXPECT_THAT(values(activation(Activation::HardSwish, x)), near({0, -1.0 / 3, 0, 2.0 / 3, 4}));
  EXPECT_THAT(values(activation(Activation::HardSigmoid, x)), near({0, 1.0 / 3, 0.5, 2.0 / 3, 1}));
  EXPECT_NEAR(activation(Activation::Gelu, f32({1}, {1})).get_f(0), 0.841345, 1e-6);
  EXPECT_NEAR(activation(Activation::GeluTanh, f32({1}, {1})).get_f(0), 0.841192, 1e-6);
  EXPECT_THAT(values(activation(Activation::Rsqrt, f32({1}, {4}))), near({0.5}));
  EXPECT_THAT(values(activation(Activation::Log10, f32({1}, {100}))), near({2}));
  EXPECT_THAT(values(clamp(x, -1.5, std::nullopt)), near({-1.5, -1, 0, 1, 4}));
  EXPECT_THAT(values(clamp(x, std::nullopt, 0.5)), near({-4, -1, 0, 0.5, 0.5}));
  EXPECT_THAT(values(leaky_relu(x, 0.1)), near({-0.4, -0.1, 0, 1, 4}));
  EXPECT_THAT(values(pow_scalar(x, 2)), near({16, 1, 0, 1, 16}));
  const HostTensor ints = HostTensor::of(ir::DType::Int32, {3}, std::vector<int32_t>{-5, 2, 9});
  const HostTensor c = clamp(ints, 0, 6);
  EXPECT_EQ(c.dtype, ir::DType::Int32);
  EXPECT_EQ(c.ints(), (std::vector<int64_t>{0, 2, 6}));
}

TEST(ShapeKernels, PadSplitPixelShuffle) {
  const HostTensor x = f32({2, 2}, {1, 2, 3, 4});
  const HostTensor p = constant_pad_nd(x, {1, 0, 0, 1}, 9);
  EXPECT_EQ(p.shape, (Shape{3, 3}));
  EXPECT_THAT(values(p), near({9, 1, 2, 9, 3, 4, 9, 9, 9}));
  EXPECT_THAT(values(constant_pad_nd(f32({2, 3}, {1, 2, 3, 4, 5, 6}), {-1, 0}, 0)), near({2, 3, 5, 6}));
  const auto parts = split_with_sizes(f32({5}, {1, 2, 3, 4, 5}), {2, 3}, 0);
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_THAT(values(parts[1]), near({3, 4, 5}));
  EXPECT_THROW(split_with_sizes(f32({5}, {1, 2, 3, 4, 5}), {2, 2}, 0), KernelError);
  const HostTensor s = pixel_shuffle(f32({1, 4, 1, 2}, {1, 2, 3, 4, 5, 6, 7, 8}), 2);
  EXPECT_EQ(s.shape, (Shape{1, 1, 2, 4}));
  EXPECT_THAT(values(s), near({1, 3, 2, 4, 5, 7, 6, 8}));
}

TEST(NnKernels, Fp16InputsRoundOnStore) {
  HostTensor h = HostTensor::zeros(ir::DType::Float16, {3});
  for (int i = 0; i < 3; ++i) h.set_f(i, 0.1 * (i + 1));
  const HostTensor r = softmax(h, 0);
  EXPECT_EQ(r.dtype, ir::DType::Float16);
  double sum = 0;
  for (double v : values(r)) sum += v;
  EXPECT_NEAR(sum, 1.0, 1e-3);
}

}  // namespace
}  // namespace vkc::kernels
