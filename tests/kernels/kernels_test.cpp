#include <gtest/gtest.h>

#include <cmath>

#include "vkc/kernels/attention.h"
#include "vkc/kernels/data_movement.h"
#include "vkc/kernels/elementwise.h"
#include "vkc/kernels/upsample.h"

namespace vkc::kernels {
namespace {

HostTensor f32(std::vector<int64_t> shape, std::vector<float> v) { return HostTensor::of(ir::DType::Float32, shape, v); }
HostTensor i64(std::vector<int64_t> shape, std::vector<int64_t> v) { return HostTensor::of(ir::DType::Int64, shape, v); }

std::vector<double> values(const HostTensor& t) {
  std::vector<double> out;
  for (int64_t i = 0; i < t.numel(); ++i) out.push_back(t.get_f(i));
  return out;
}

TEST(Kernels, BinaryBroadcastsLikeNumpy) {
  HostTensor r = binary(BinaryOp::Add, f32({2, 1}, {1, 2}), f32({3}, {10, 20, 30}));
  EXPECT_EQ(r.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(values(r), (std::vector<double>{11, 21, 31, 12, 22, 32}));
  EXPECT_THROW(binary(BinaryOp::Add, f32({2}, {1, 2}), f32({3}, {1, 2, 3})), KernelError);
}

TEST(Kernels, IntegerDivisionTruncatesAndComparisonsGiveBool) {
  HostTensor d = binary(BinaryOp::Div, i64({2}, {7, -7}), i64({1}, {2}));
  EXPECT_EQ(d.ints(), (std::vector<int64_t>{3, -3}));
  HostTensor m = binary(BinaryOp::Mod, i64({2}, {7, -7}), i64({1}, {3}));
  EXPECT_EQ(m.ints(), (std::vector<int64_t>{1, 2}));
  HostTensor lt = binary(BinaryOp::Less, f32({3}, {1, 5, 3}), f32({}, {3}));
  EXPECT_EQ(lt.dtype, ir::DType::Bool);
  EXPECT_EQ(lt.ints(), (std::vector<int64_t>{1, 0, 0}));
  EXPECT_THROW(binary(BinaryOp::Div, i64({1}, {1}), i64({1}, {0})), KernelError);
}

TEST(Kernels, UnaryWhereCast) {
  EXPECT_EQ(values(unary(UnaryOp::Sqrt, f32({2}, {4, 9}))), (std::vector<double>{2, 3}));
  EXPECT_EQ(values(unary(UnaryOp::Round, f32({3}, {0.5f, 1.5f, -2.5f}))), (std::vector<double>{0, 2, -2}));
  HostTensor w = where(HostTensor::of(ir::DType::Bool, {2}, std::vector<uint8_t>{1, 0}), f32({2}, {1, 2}), f32({}, {9}));
  EXPECT_EQ(values(w), (std::vector<double>{1, 9}));
  HostTensor c = cast(f32({3}, {1.9f, -1.9f, 0}), ir::DType::Int64);
  EXPECT_EQ(c.ints(), (std::vector<int64_t>{1, -1, 0}));
  EXPECT_EQ(cast(f32({2}, {0.0f, 2.0f}), ir::DType::Bool).ints(), (std::vector<int64_t>{0, 1}));
  // f32 <-> f16 (typed loops): round to nearest even, overflow to inf, and back exactly
  HostTensor h = cast(f32({4}, {1.0f / 3, -2.5f, 65520.0f, 1e-8f}), ir::DType::Float16);
  EXPECT_EQ(h.dtype, ir::DType::Float16);
  EXPECT_EQ(values(cast(h, ir::DType::Float32)), (std::vector<double>{0.333251953125, -2.5, INFINITY, 0}));
}

TEST(Kernels, ShapeOps) {
  HostTensor x = f32({2, 3}, {0, 1, 2, 3, 4, 5});
  EXPECT_EQ(values(transpose(x, {1, 0})), (std::vector<double>{0, 3, 1, 4, 2, 5}));
  EXPECT_EQ(values(concat({&x, &x}, 1)), (std::vector<double>{0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5}));
  EXPECT_EQ(values(gather(x, i64({2}, {-1, 0}), 1)), (std::vector<double>{2, 0, 5, 3}));
  EXPECT_EQ(values(slice(x, {1}, {INT64_MAX}, {1}, {})), (std::vector<double>{1, 2, 4, 5}));
  EXPECT_EQ(values(slice(x, {-1}, {-4}, {1}, {-1})), (std::vector<double>{2, 1, 0, 5, 4, 3}));
  EXPECT_EQ(expand(f32({1}, {7}), {2, 2}).shape, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(values(tile(f32({2}, {1, 2}), {2})), (std::vector<double>{1, 2, 1, 2}));
  EXPECT_EQ(values(range(0, 1, 0.25, ir::DType::Float32)), (std::vector<double>{0, 0.25, 0.5, 0.75}));
  EXPECT_THROW(reshape(x, {4}), KernelError);
  EXPECT_THROW(gather(x, i64({1}, {3}), 1), KernelError);
  // gather_elements: x [2, 3]; indices [2, 2] along axis 1 (row-wise picks), then axis 0
  EXPECT_EQ(values(gather_elements(x, i64({2, 2}, {2, 0, -1, 1}), 1)), (std::vector<double>{2, 0, 5, 4}));
  EXPECT_EQ(values(gather_elements(x, i64({1, 3}, {1, 0, 1}), 0)), (std::vector<double>{3, 1, 5}));
  EXPECT_THROW(gather_elements(x, i64({1, 3}, {2, 0, 0}), 0), KernelError);  // out of range
  EXPECT_THROW(gather_elements(x, i64({3}, {0, 0, 0}), 0), KernelError);     // rank differs
}

TEST(Kernels, Reductions) {
  HostTensor x = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  HostTensor m = reduce(ReduceOp::Mean, x, {1}, true);
  EXPECT_EQ(m.shape, (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(values(m), (std::vector<double>{2, 5}));
  EXPECT_EQ(values(reduce(ReduceOp::Max, x, {0}, false)), (std::vector<double>{4, 5, 6}));
  EXPECT_EQ(values(reduce(ReduceOp::Sum, x, {}, false)), (std::vector<double>{21}));
}

TEST(Kernels, RmsNormScalesByTheRootMeanSquare) {
  // rows [3, 4] (rms = sqrt(12.5)) and [0, 0] (eps only)
  HostTensor y = rms_norm(f32({2, 2}, {3, 4, 0, 0}), f32({2}, {1, 2}), 0.0);
  const double r = std::sqrt(12.5);
  EXPECT_NEAR(y.get_f(0), 3 / r, 1e-6);
  EXPECT_NEAR(y.get_f(1), 2 * 4 / r, 1e-6);
  HostTensor z = rms_norm(f32({1, 2}, {0, 0}), f32({2}, {1, 1}), 1e-6);
  EXPECT_EQ(values(z), (std::vector<double>{0, 0}));
  EXPECT_THROW(rms_norm(f32({1, 3}, {1, 2, 3}), f32({2}, {1, 1}), 0.0), KernelError);
}

TEST(Kernels, SdpaIsSoftmaxWeightedValues) {
  // one query, two keys: scores [0, 1] -> weights [1/(1+e), e/(1+e)]
  HostTensor q = f32({1, 1, 1}, {1}), k = f32({1, 2, 1}, {0, 1}), v = f32({1, 2, 1}, {10, 20});
  const double w1 = std::exp(1.0) / (1 + std::exp(1.0));
  EXPECT_NEAR(sdpa(q, k, v, nullptr, 1.0).get_f(0), 10 * (1 - w1) + 20 * w1, 1e-5);
  // a mask that hides the second key
  HostTensor mask = f32({1, 2}, {0, -1e9f});
  EXPECT_NEAR(sdpa(q, k, v, &mask, 1.0).get_f(0), 10.0, 1e-5);
  // scale 0: uniform weights
  EXPECT_NEAR(sdpa(q, k, v, nullptr, 0.0).get_f(0), 15.0, 1e-5);
  EXPECT_THROW(sdpa(q, f32({1, 2, 2}, {0, 0, 0, 0}), v, nullptr, 1.0), KernelError);
}

}  // namespace
}  // namespace vkc::kernels

namespace vkc::kernels {
namespace {

// x = [1, 2, 3] (one row) sampled at x = -1, 1.5 and -1/3 (pixels -0.5, 3.25 and 0.5 without
// align_corners): outside taps read 0 (zeros), clamp (border) or mirror at the pixel borders
// (reflection: 3.25 -> 1.75); nearest rounds half to even.
TEST(Kernels, GridSampleModesAndPadding) {
  const HostTensor x = HostTensor::of(ir::DType::Float32, {1, 1, 1, 3}, std::vector<float>{1, 2, 3});
  const HostTensor grid =
      HostTensor::of(ir::DType::Float32, {1, 1, 3, 2}, std::vector<float>{-1, 0, 1.5f, 0, -1.0f / 3, 0});
  auto run = [&](int mode, int padding) {
    std::vector<double> v;
    const HostTensor y = grid_sample(x, grid, mode, padding, false);
    EXPECT_EQ(y.shape, (std::vector<int64_t>{1, 1, 1, 3}));
    for (int64_t i = 0; i < 3; ++i) v.push_back(std::round(y.get_f(i) * 1e4) / 1e4);
    return v;
  };
  EXPECT_EQ(run(0, 0), (std::vector<double>{0.5, 0, 1.5}));
  EXPECT_EQ(run(0, 1), (std::vector<double>{1, 3, 1.5}));
  EXPECT_EQ(run(0, 2), (std::vector<double>{1, 2.75, 1.5}));
  EXPECT_EQ(run(1, 0), (std::vector<double>{1, 0, 1}));
  EXPECT_THROW(grid_sample(x, grid, 2, 0, false), KernelError);  // bicubic
}

}  // namespace
}  // namespace vkc::kernels
