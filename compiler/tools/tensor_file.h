// Tensor files for `vkc run` and the conformance runner: ONNX TensorProto (.pb, as in ONNX's
// test data) and raw little-endian element data (.bin, as ort-reference.js dumps).
#pragma once

#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "vkc/kernels/host_tensor.h"

namespace onnx {
class TensorProto;
}

namespace vkc::tools {

/// A TensorProto's dtype, dims and data (raw_data or the typed fields). Throws std::runtime_error
/// for external data, strings or a size that does not match the dims.
kernels::HostTensor tensor_from_proto(const onnx::TensorProto& t);
/// A serialized TensorProto's tensor; `name` (when given) receives its name. The dims' claim is
/// checked against the data present before anything is allocated.
kernels::HostTensor tensor_from_pb_bytes(std::span<const uint8_t> bytes, std::string* name = nullptr);
/// Raw element data of `dtype` and `shape`; the size must match exactly.
kernels::HostTensor tensor_from_bin_bytes(std::vector<uint8_t> bytes, ir::DType dtype, std::vector<int64_t> shape);
/// Reads a serialized TensorProto; `name` (when given) receives its name.
kernels::HostTensor read_tensor_pb(const std::filesystem::path& path, std::string* name = nullptr);
/// Reads raw element data of `dtype` and `shape`; the file size must match exactly.
kernels::HostTensor read_tensor_bin(const std::filesystem::path& path, ir::DType dtype, std::vector<int64_t> shape);
/// Writes `t` as a TensorProto with raw_data.
void write_tensor_pb(const std::filesystem::path& path, const kernels::HostTensor& t, const std::string& name);

/// The seeded generator of ort-reference.js (uniform in [-1, 1), stored as f32), so that
/// `vkc run --random SEED` feeds the same inputs as `ORT_DUMP=... node ort-reference.js`.
class OrtRandom {
 public:
  explicit OrtRandom(uint64_t seed) : seed_(seed) {}
  double next();  // in [0, 1]
  /// Float inputs get next() * 2 - 1; integer and bool inputs get 0.
  kernels::HostTensor tensor(ir::DType dtype, const std::vector<int64_t>& shape);

 private:
  uint64_t seed_;
};

}  // namespace vkc::tools
