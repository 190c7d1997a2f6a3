// A small Llama-style block for quantization tests, built with the ONNX protobuf API:
//   ids [8] -> Gather(tok_embeddings [256, 128]) -> x
//   SwiGLU MLP: gate = x @ w1 [128, 256] (MatMul), up = x @ w3 (MatMul), down = (silu(gate) * up) @ w2 [256, 128]
//   out = Gemm(x + down, output.weight [256, 128], transB=1) -> logits [8, 256]
//   tiny = Gemm(x, tiny.weight [16, 128], transB=1) -> [8, 16] (below the size threshold: stays fp)
// Weights are Gaussian (std 0.02) from a fixed seed; weight(name) gives them back.
#pragma once

#include <map>
#include <random>

#include "onnx_test_models.h"

namespace vkc::test {

struct LlamaTestModel {
  static constexpr int64_t kVocab = 256, kDim = 128, kHidden = 256, kSeq = 8;
  std::map<std::string, std::vector<float>> weights;  // as stored in the ONNX file
  fs::path path;

  const std::vector<float>& weight(const std::string& name) const { return weights.at(name); }

  /// The [N, K] (out, in) form of a linear's weight, as aten.linear reads it.
  std::vector<float> linear_nk(const std::string& name, bool stored_kn, int64_t k, int64_t n) const {
    const auto& w = weight(name);
    if (!stored_kn) return w;
    std::vector<float> t(w.size());
    for (int64_t r = 0; r < k; ++r)
      for (int64_t c = 0; c < n; ++c) t[c * k + r] = w[r * n + c];
    return t;
  }

  static LlamaTestModel write(const fs::path& dir) {
    LlamaTestModel m;
    ModelBuilder b(8, 17);
    std::mt19937 rng(1234);
    std::normal_distribution<float> d(0.0f, 0.02f);
    auto init = [&](const std::string& name, std::vector<int64_t> dims) {
      size_t n = 1;
      for (int64_t x : dims) n *= static_cast<size_t>(x);
      std::vector<float> v(n);
      for (float& x : v) x = d(rng);
      b.raw_floats(name, dims, v);
      m.weights[name] = std::move(v);
    };
    b.input("ids", onnx::TensorProto_DataType_INT64, {kSeq});
    b.output("logits", kF32, {kSeq, kVocab});
    b.output("tiny", kF32, {kSeq, 16});
    init("tok_embeddings.weight", {kVocab, kDim});
    init("w1", {kDim, kHidden});
    init("w3", {kDim, kHidden});
    init("w2", {kHidden, kDim});
    init("output.weight", {kVocab, kDim});
    init("tiny.weight", {16, kDim});
    attr_int(b.node("Gather", {"tok_embeddings.weight", "ids"}, {"x"}, "embed"), "axis", 0);
    b.node("MatMul", {"x", "w1"}, {"gate"}, "feed_forward.w1");
    b.node("MatMul", {"x", "w3"}, {"up"}, "feed_forward.w3");
    b.node("Sigmoid", {"gate"}, {"gate_sig"}, "silu_sigmoid");
    b.node("Mul", {"gate", "gate_sig"}, {"silu"}, "silu");
    b.node("Mul", {"silu", "up"}, {"gated"}, "gated");
    b.node("MatMul", {"gated", "w2"}, {"down"}, "feed_forward.w2");
    b.node("Add", {"x", "down"}, {"h"}, "residual");
    attr_int(b.node("Gemm", {"h", "output.weight"}, {"logits"}, "output"), "transB", 1);
    attr_int(b.node("Gemm", {"x", "tiny.weight"}, {"tiny"}, "tiny"), "transB", 1);
    m.path = b.save(dir / "llama_block.onnx");
    return m;
  }
};

}  // namespace vkc::test
