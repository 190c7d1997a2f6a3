// Choosing the next token from a logits row: greedy (temperature 0, the default: exact and
// repeatable), or sampled at a temperature after top-k and top-p (nucleus) filtering, from a
// seeded generator (the same seed, the same tokens).
#pragma once

#include <cstdint>
#include <random>
#include <utility>
#include <vector>

#include "vkc/kernels/host_tensor.h"

namespace vkc::runtime {

struct SamplingOptions {
  double temperature = 0;  // <= 0: greedy
  double top_p = 1;        // keep the most likely tokens whose probabilities sum to top_p (1: all)
  int64_t top_k = 0;       // keep the k most likely (0: all)
  uint64_t seed = 0;
};

class Sampler {
 public:
  explicit Sampler(const SamplingOptions& options) : options_(options), rng_(options.seed) {}
  /// The token for row `row` of logits [..., rows, V] (the first `vocab` entries when vocab > 0).
  int64_t next(const kernels::HostTensor& logits, int64_t row, int64_t vocab = 0);

 private:
  SamplingOptions options_;
  std::mt19937_64 rng_;
  std::vector<float> row_buffer_;                       // f16 logits widened
  std::vector<std::pair<double, int64_t>> entries_;     // (probability, token) of a sampled row
};

}  // namespace vkc::runtime
