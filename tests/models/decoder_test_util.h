// What the decoder export tests share (decoder_exports_test.cpp, decoder_families_test.cpp): a
// family's greedy tokens, a data set compiled and matched on every backend, and compiles of an
// export edited in memory (the forms no exporter run wrote).
#pragma once

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "export_test_util.h"

namespace vkc::test {

inline std::vector<int64_t> ints(const nlohmann::json& j) { return j.get<std::vector<int64_t>>(); }

/// A family folder's greedy.json: the prompt and the tokens transformers' generate() picked.
struct Greedy {
  std::vector<int64_t> prompt, tokens;
};
inline Greedy greedy_of(const fs::path& family_dir) {
  std::ifstream f(family_dir / "greedy.json");
  const nlohmann::json j = nlohmann::json::parse(f);
  return {ints(j.at("prompt")), ints(j.at("hf_generate"))};
}

/// The KV-cache program `pte` generates the family's greedy tokens on every backend.
inline void expect_family_tokens(const std::vector<uint8_t>& pte, const fs::path& family_dir, bool gpu_kernels_too = false) {
  const Greedy g = greedy_of(family_dir);
  expect_generates(pte, g.prompt, g.tokens, gpu_kernels_too);
}

/// `dir`'s model compiled with `options`: every backend reproduces data set `set` (whose inputs,
/// already read for the options, are `inputs`) within rtol, atol. Returns the compile.
inline CompileResult expect_set_compiles_and_matches(const fs::path& dir, const std::string& set,
                                                     const std::vector<Tensor>& inputs, const CompileOptions& options,
                                                     double rtol = 1e-3, double atol = 1e-4) {
  CompileResult r = compile(dir / "model.onnx", options);
  EXPECT_TRUE(r.ok) << dir.string() << ": " << diags(r.diagnostics);
  if (!r.ok) return r;
  const auto want = read_set(dir / set, "output");
  for (const std::string& b : backends())
    expect_close(run_pte(r.pte, inputs, b), want, dir.filename().string() + " " + set + " on " + b, rtol, atol);
  return r;
}

/// An export read to be edited.
inline onnx::ModelProto read_model(const fs::path& file) {
  onnx::ModelProto m;
  std::ifstream in(file, std::ios::binary);
  EXPECT_TRUE(m.ParseFromIstream(&in)) << file.string();
  return m;
}

/// Each symbolic dim of the model's inputs sized as data set `inputs` has it (inputs in order).
inline std::map<std::string, int64_t> dims_of_set(const fs::path& model, const std::vector<Tensor>& inputs) {
  const onnx::ModelProto m = read_model(model);
  std::map<std::string, int64_t> dims;
  for (int i = 0; i < m.graph().input_size() && i < static_cast<int>(inputs.size()); ++i) {
    const auto& d = m.graph().input(i).type().tensor_type().shape().dim();
    for (int k = 0; k < d.size(); ++k)
      if (d[k].has_dim_param()) dims[d[k].dim_param()] = inputs[i].shape.at(k);
  }
  return dims;
}

/// Options for one program of prefill chunks of up to 3 tokens and decode steps, its cache of 32.
inline CompileOptions prefill_and_decode(const std::string& sequence_dim) {
  CompileOptions o;
  o.max_seq_len = 32;
  o.dim_ranges = {{sequence_dim, {1, 3}}};
  return o;
}

/// An edited model compiled from memory.
inline CompileResult compile_model(const onnx::ModelProto& m, const CompileOptions& options) {
  std::string bytes;
  EXPECT_TRUE(m.SerializeToString(&bytes));
  return compile(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()), fs::path(),
                 options);
}

}  // namespace vkc::test
