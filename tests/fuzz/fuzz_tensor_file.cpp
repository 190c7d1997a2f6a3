// fuzz_tensor_file: tensor files as `vkc run` reads them: a serialized ONNX TensorProto (.pb), and
// raw element data (.bin) under a dtype and shape taken from the input's first bytes.
#include <cstdint>
#include <span>
#include <stdexcept>
#include <vector>

#include "tensor_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    (void)vkc::tools::tensor_from_pb_bytes(std::span<const uint8_t>(data, size));
  } catch (const std::runtime_error&) {
  }
  if (size >= 3) {
    const auto dtype = static_cast<vkc::ir::DType>(data[0] % 8);
    std::vector<int64_t> shape;
    for (size_t i = 0; i < data[1] % 4; ++i) shape.push_back(static_cast<int64_t>(data[2]) - 8);
    try {
      (void)vkc::tools::tensor_from_bin_bytes(std::vector<uint8_t>(data + 3, data + size), dtype, shape);
    } catch (const std::runtime_error&) {
    }
  }
  return 0;
}
