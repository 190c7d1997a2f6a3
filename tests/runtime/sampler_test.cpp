// The token sampler (vkc::runtime::Sampler): greedy choice over f32, f16 and f64 logits against a
// plain loop over every element as double (the first of the largest; a NaN never wins, one first
// keeps index 0), whatever the ties, NaNs and signed zeros, at every length around the typed
// path's 8 lanes.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "vkc/ir/half.h"
#include "vkc/runtime/sampler.h"

namespace vkc::runtime {
namespace {

using kernels::HostTensor;

int64_t reference_argmax(const std::vector<double>& x) {
  int64_t best = 0;
  for (size_t j = 1; j < x.size(); ++j)
    if (x[j] > x[static_cast<size_t>(best)]) best = static_cast<int64_t>(j);
  return best;
}

// Logits rounded to the f16 grid (exact in every dtype), with ties, signed zeros and NaNs.
std::vector<double> logits(size_t n, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int> pick(0, 40);
  std::vector<double> x(n);
  for (double& v : x) {
    const int k = pick(gen);
    v = k == 0 ? NAN : k == 1 ? -0.0 : k == 2 ? 0.0 : ir::half_to_float(ir::float_to_half(static_cast<float>(k % 7) * 0.5f - 1.0f));
  }
  return x;
}

HostTensor as(ir::DType dtype, const std::vector<double>& x) {
  const std::vector<int64_t> shape{2, static_cast<int64_t>(x.size() / 2)};
  if (dtype == ir::DType::Float64) return HostTensor::of(dtype, shape, x);
  if (dtype == ir::DType::Float32) return HostTensor::of(dtype, shape, std::vector<float>(x.begin(), x.end()));
  std::vector<uint16_t> h;
  for (double v : x) h.push_back(ir::float_to_half(static_cast<float>(v)));
  return HostTensor::of(dtype, shape, h);
}

TEST(Sampler, GreedyIsTheFirstOfTheLargestInEveryDtype) {
  for (size_t width : {1u, 7u, 8u, 9u, 17u, 64u, 1003u})
    for (uint32_t seed = 0; seed < 20; ++seed) {
      std::vector<double> x = logits(2 * width, seed);
      if (seed == 1) x[0] = NAN;            // nothing compares greater: index 0
      if (seed == 2) x[width] = NAN;        // the same in row 1
      if (seed == 3) x[width - 1] = 1e30;   // the last element, in the typed path's tail
      for (ir::DType dt : {ir::DType::Float32, ir::DType::Float16, ir::DType::Float64}) {
        const HostTensor t = as(dt, x);
        Sampler greedy({});
        for (int64_t row = 0; row < 2; ++row) {
          const std::vector<double> r(x.begin() + row * static_cast<int64_t>(width), x.begin() + (row + 1) * static_cast<int64_t>(width));
          std::vector<double> seen(r);
          if (dt == ir::DType::Float32 || dt == ir::DType::Float16)  // 1e30 becomes inf in f16: still the largest
            for (double& v : seen) v = dt == ir::DType::Float16 ? ir::half_to_float(ir::float_to_half(static_cast<float>(v))) : v;
          EXPECT_EQ(greedy.next(t, row), reference_argmax(seen)) << "width " << width << " seed " << seed << " dtype "
                                                                   << ir::dtype_name(dt) << " row " << row;
          // A vocabulary shorter than the row: only its first entries count.
          const int64_t vocab = std::max<int64_t>(1, static_cast<int64_t>(width) - 3);
          EXPECT_EQ(greedy.next(t, row, vocab), reference_argmax({seen.begin(), seen.begin() + vocab}));
        }
      }
    }
}

}  // namespace
}  // namespace vkc::runtime
