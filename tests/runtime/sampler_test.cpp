// The token sampler (vkc::runtime::Sampler): greedy choice over f32, f16 and f64 logits against a
// plain loop over every element as double (the first of the largest; a NaN never wins, one first
// keeps index 0), whatever the ties, NaNs and signed zeros, at every length around the typed
// path's 8 lanes; sampled choice (temperature, top-k, top-p) against the whole row sorted.
#include <gtest/gtest.h>

#include <algorithm>
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

// The sampler's draw written plainly: every entry's exp((x - max) / T), the whole row sorted
// likeliest first (ties by id), top-k then top-p cut it, one uniform draw over the kept mass
// (the row's sum when nothing is cut) walked down that order.
int64_t reference_draw(const std::vector<double>& x, const SamplingOptions& o, std::mt19937_64& rng) {
  std::vector<std::pair<double, int64_t>> p(x.size());
  double max_logit = -INFINITY, sum = 0;
  for (double v : x) max_logit = std::max(max_logit, v);
  for (size_t j = 0; j < x.size(); ++j) {
    p[j] = {std::exp((x[j] - max_logit) / o.temperature), static_cast<int64_t>(j)};
    sum += p[j].first;
  }
  std::sort(p.begin(), p.end(), [](const auto& a, const auto& b) { return a.first > b.first || (a.first == b.first && a.second < b.second); });
  size_t keep = p.size();
  if (o.top_k > 0) keep = std::min(keep, static_cast<size_t>(o.top_k));
  double mass = 0;
  for (size_t i = 0; o.top_p < 1 && i < keep; ++i)
    if ((mass += p[i].first / sum) >= o.top_p) keep = i + 1;
  double kept = 0;
  for (size_t i = 0; i < keep; ++i) kept += p[i].first;
  if (keep == p.size()) kept = sum;
  double u = std::uniform_real_distribution<double>(0, kept)(rng);
  for (size_t i = 0; i < keep; ++i)
    if ((u -= p[i].first) <= 0) return p[i].second;
  return p[keep - 1].second;
}

TEST(Sampler, SampledTokensAreThoseOfTheWholeRowSorted) {
  std::mt19937 gen(11);
  for (const double spread : {0.5, 4.0, 20.0}) {  // flat to peaked rows: nuclei of thousands to a few
    std::normal_distribution<float> logit(0.0f, static_cast<float>(spread));
    std::vector<float> row(32000);
    for (float& v : row) v = logit(gen);
    for (size_t i = 0; i < 50; ++i) row[i * 613] = row[i * 613 + 1];  // ties
    const std::vector<double> x(row.begin(), row.end());
    const HostTensor t = HostTensor::of(ir::DType::Float32, {1, 1, 32000}, row);
    for (const SamplingOptions o : {SamplingOptions{0.8, 1.0, 0, 3}, SamplingOptions{0.8, 0.9, 0, 4},
                                    SamplingOptions{1.5, 0.95, 50, 5}, SamplingOptions{1.0, 1.0, 40, 6},
                                    SamplingOptions{0.7, 0.5, 3000, 7}}) {
      Sampler s(o);
      std::mt19937_64 rng(o.seed);
      for (int draw = 0; draw < 20; ++draw)
        ASSERT_EQ(s.next(t, 0), reference_draw(x, o, rng))
            << "spread " << spread << " T " << o.temperature << " top-p " << o.top_p << " top-k " << o.top_k << " draw " << draw;
    }
  }
}

}  // namespace
}  // namespace vkc::runtime
