// A small model over a symbolic batch and sequence, and a check of its outputs computed here, for
// the tests of programs compiled for several sizes (dim_sizes_test.cpp) and for a range of sizes
// (dim_ranges_test.cpp).
#pragma once

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "onnx_test_models.h"
#include "vkc/runtime/vulkan.h"
#include "vkc/vkc.h"

namespace vkc::test {

inline constexpr int64_t kWidth = 4, kOut = 3;

inline std::vector<float> weights() {
  std::vector<float> w(kWidth * kOut);
  for (size_t i = 0; i < w.size(); ++i) w[i] = std::sin(0.7f * static_cast<float>(i) + 0.3f);
  return w;
}

// x [batch, sequence, 4]: y = Softmax(x @ W, axis=1) over the sequence, z = ReduceMean(x, axis 1).
inline std::vector<uint8_t> sequence_model() {
  ModelBuilder m(8, 13);
  m.input("x", kF32, {std::string("batch"), std::string("sequence"), kWidth});
  m.raw_floats("W", {kWidth, kOut}, weights());
  m.node("MatMul", {"x", "W"}, {"m"}, "mm");
  attr_int(m.node("Softmax", {"m"}, {"y"}, "softmax"), "axis", 1);
  attr_ints(m.node("ReduceMean", {"x"}, {"z"}, "mean"), "axes", {1});
  m.output("y", kF32, {std::string("batch"), std::string("sequence"), kOut});
  m.output("z", kF32, {std::string("batch"), 1, kWidth});
  return m.bytes();
}

inline std::vector<float> input_values(int64_t b, int64_t s) {
  std::vector<float> x(static_cast<size_t>(b * s * kWidth));
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::cos(1.3f * static_cast<float>(i) + static_cast<float>(s));
  return x;
}

// Runs the program on x [b, s, 4] with each backend and checks y and z against the definition.
inline void expect_runs(const std::vector<uint8_t>& pte, int64_t b, int64_t s) {
  const auto x = input_values(b, s);
  const auto w = weights();
  for (const std::string backend : {"cpu", "vulkan"}) {
    if (backend == "vulkan" && runtime::vulkan_device_name().empty()) continue;
    RunOptions ro;
    ro.backend = backend;
    const RunResult out = run(std::span<const uint8_t>(pte), {Tensor::of(ir::DType::Float32, {b, s, kWidth}, x)}, ro);
    ASSERT_TRUE(out.ok) << backend << " s=" << s << ": " << (out.diagnostics.empty() ? "" : out.diagnostics[0].message);
    ASSERT_EQ(out.outputs.at(0).shape, (std::vector<int64_t>{b, s, kOut})) << backend;
    ASSERT_EQ(out.outputs.at(1).shape, (std::vector<int64_t>{b, 1, kWidth})) << backend;
    for (int64_t n = 0; n < b; ++n) {
      for (int64_t o = 0; o < kOut; ++o) {
        std::vector<double> logits(static_cast<size_t>(s));
        double mx = -1e30, sum = 0;
        for (int64_t t = 0; t < s; ++t) {
          for (int64_t k = 0; k < kWidth; ++k) logits[t] += x[(n * s + t) * kWidth + k] * w[k * kOut + o];
          mx = std::max(mx, logits[t]);
        }
        for (double& l : logits) sum += l = std::exp(l - mx);
        for (int64_t t = 0; t < s; ++t)
          EXPECT_NEAR(out.outputs[0].get_f((n * s + t) * kOut + o), logits[t] / sum, 1e-5)
              << backend << " b=" << b << " s=" << s;
      }
      for (int64_t k = 0; k < kWidth; ++k) {
        double mean = 0;
        for (int64_t t = 0; t < s; ++t) mean += x[(n * s + t) * kWidth + k];
        EXPECT_NEAR(out.outputs[1].get_f(n * kWidth + k), mean / static_cast<double>(s), 1e-5) << backend;
      }
    }
  }
}

inline std::string run_error(const std::vector<uint8_t>& pte, int64_t b, int64_t s, const std::string& backend) {
  RunOptions ro;
  ro.backend = backend;
  const RunResult out = run(std::span<const uint8_t>(pte), {Tensor::of(ir::DType::Float32, {b, s, kWidth}, input_values(b, s))}, ro);
  return out.ok ? std::string("(ran)") : out.diagnostics.at(0).message;
}

/// The sequence model compiled with `o` (batch fixed at 1) for several sequence lengths up to
/// `max_sequence`: its one note must contain `note`, and inspect() must read plan input 0 as
/// dynamic-bound by [1, max_sequence, 4].
struct DynamicSequenceProgram {
  CompileResult compiled;
  InspectResult info;
  bool ok() const { return compiled.ok && info.ok; }
  const std::vector<uint8_t>& pte() const { return compiled.pte; }
};
inline CompileResult compile_sequence_model(const CompileOptions& o, const std::string& note);
inline InspectResult inspect_dynamic_input(const std::vector<uint8_t>& pte, int64_t max_sequence);
inline DynamicSequenceProgram dynamic_sequence_program(const CompileOptions& o, const std::string& note,
                                                       int64_t max_sequence) {
  DynamicSequenceProgram p{compile_sequence_model(o, note), {}};
  if (p.compiled.ok) p.info = inspect_dynamic_input(p.compiled.pte, max_sequence);
  return p;
}

inline CompileResult compile_sequence_model(const CompileOptions& o, const std::string& note) {
  CompileOptions with_batch = o;
  with_batch.dims.emplace("batch", 1);
  CompileResult r = compile(sequence_model(), fs::path(), with_batch);
  EXPECT_TRUE(r.ok) << r.error();
  EXPECT_EQ(r.diagnostics.size(), r.ok ? 1u : 0u);
  if (r.ok && !r.diagnostics.empty()) EXPECT_THAT(r.diagnostics[0].message, ::testing::HasSubstr(note));
  return r;
}

/// inspect() of a program whose plan input 0 must be dynamic-bound by [1, max_sequence, 4].
inline InspectResult inspect_dynamic_input(const std::vector<uint8_t>& pte, int64_t max_sequence) {
  InspectResult info = inspect(std::span<const uint8_t>(pte));
  EXPECT_TRUE(info.ok);
  if (info.ok) {
    const auto& in = info.report.plans.at(0).input_shapes.at(0);
    EXPECT_TRUE(in.dynamic);
    EXPECT_EQ(in.shape, (std::vector<int64_t>{1, max_sequence, kWidth}));
  }
  return info;
}

}  // namespace vkc::test
