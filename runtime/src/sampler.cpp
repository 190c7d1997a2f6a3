#include "vkc/runtime/sampler.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

namespace vkc::runtime {

int64_t Sampler::next(const kernels::HostTensor& logits, int64_t row, int64_t vocab) {
  const int64_t width = logits.shape.back();
  const int64_t v = vocab > 0 ? std::min(vocab, width) : width;
  const int64_t base = row * width;
  if (options_.temperature <= 0) {
    int64_t best = 0;
    double best_value = logits.get_f(base);
    for (int64_t j = 1; j < v; ++j)
      if (const double x = logits.get_f(base + j); x > best_value) best_value = x, best = j;
    return best;
  }
  std::vector<std::pair<double, int64_t>> p(static_cast<size_t>(v));
  double max_logit = -INFINITY;
  for (int64_t j = 0; j < v; ++j) max_logit = std::max(max_logit, logits.get_f(base + j));
  double sum = 0;
  for (int64_t j = 0; j < v; ++j) {
    const double e = std::exp((logits.get_f(base + j) - max_logit) / options_.temperature);
    p[static_cast<size_t>(j)] = {e, j};
    sum += e;
  }
  // Most likely first; ties by id so the order (and the draw) is repeatable.
  std::sort(p.begin(), p.end(), [](const auto& a, const auto& b) { return a.first > b.first || (a.first == b.first && a.second < b.second); });
  size_t keep = p.size();
  if (options_.top_k > 0) keep = std::min(keep, static_cast<size_t>(options_.top_k));
  if (options_.top_p < 1) {
    double mass = 0;
    for (size_t i = 0; i < keep; ++i) {
      mass += p[i].first / sum;
      if (mass >= options_.top_p) {
        keep = i + 1;
        break;
      }
    }
  }
  double kept = 0;
  for (size_t i = 0; i < keep; ++i) kept += p[i].first;
  double u = std::uniform_real_distribution<double>(0, kept)(rng_);
  for (size_t i = 0; i < keep; ++i) {
    u -= p[i].first;
    if (u <= 0) return p[i].second;
  }
  return p[keep - 1].second;
}

}  // namespace vkc::runtime
