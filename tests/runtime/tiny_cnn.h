// examples/models/tiny_cnn.onnx, onnxruntime's input and output for it (tests/runtime/data/
// tiny_cnn), and compiling models with the compiler library, for the end-to-end tests.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

#include "vkc/compiler/driver.h"
#include "vkc/kernels/host_tensor.h"

namespace vkc::test {

inline const std::filesystem::path kTinyCnnModel =
    std::filesystem::path(VKC_SOURCE_DIR) / "examples/models/tiny_cnn.onnx";
inline const std::filesystem::path kTinyCnnData = std::filesystem::path(VKC_TEST_DATA_DIR) / "tiny_cnn";

/// A raw little-endian f32 file as a tensor of `shape` (its size checked).
inline kernels::HostTensor read_f32(const std::filesystem::path& p, std::vector<int64_t> shape) {
  std::ifstream f(p, std::ios::binary);
  std::vector<uint8_t> bytes{std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
  kernels::HostTensor t{ir::DType::Float32, std::move(shape), ir::TensorData::owned(std::move(bytes))};
  EXPECT_EQ(t.data.size(), static_cast<size_t>(t.numel()) * 4) << p;
  return t;
}

/// `model` compiled with `config` into .pte bytes.
inline std::vector<uint8_t> compile_model(const std::filesystem::path& model, const compiler::CompileConfig& config) {
  std::vector<uint8_t> pte;
  compiler::PteSink sink;
  sink.bytes = &pte;
  compiler::ModelSource src;
  src.file = model;
  compiler::compile(src, sink, config);
  return pte;
}

/// tiny_cnn compiled for a 1x3x32x32 image with `options`.
inline std::vector<uint8_t> compile_tiny(const serializer::CompileOptions& options) {
  compiler::CompileConfig config;
  config.options = options;
  config.input_shapes["image"] = {1, 3, 32, 32};
  return compile_model(kTinyCnnModel, config);
}

}  // namespace vkc::test
