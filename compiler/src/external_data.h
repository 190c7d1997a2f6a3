// External tensor data (TensorProto.data_location == EXTERNAL): files beside the
// model, memory-mapped once each and viewed in place.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "vkc/ir/tensor_data.h"

namespace onnx {
class TensorProto;
}

namespace vkc::compiler::detail {

class MappedFile;

class ExternalData {
 public:
  /// `model_dir`: the directory locations are relative to; empty refuses all external data.
  explicit ExternalData(const std::filesystem::path& model_dir);

  /// The `nbytes` bytes of external tensor `t`: a view into its file's mapping, or a copy when its offset is
  /// not a multiple of `element_size` (elements are read in place).
  /// `what` names the tensor in errors ("initializer 'W'").
  ir::TensorData load(const onnx::TensorProto& t, uint64_t nbytes, size_t element_size, std::string_view what);

  /// Maps `file` (the model's own file, symlinks followed) and returns its bytes; tensors whose
  /// location is `location` then read from that mapping (raw_data left in place,
  /// onnx_raw_data_in_place.h), whose length errors name raw_data.
  std::span<const uint8_t> adopt_model_file(const std::filesystem::path& file, const std::string& location);

  /// The mappings made so far, for the graph to keep alive.
  std::vector<std::shared_ptr<const void>> mappings() const;

 private:
  std::filesystem::path resolve(const std::string& location, std::string_view what) const;
  std::shared_ptr<const MappedFile> map(const std::filesystem::path& file, std::string_view what);

  std::filesystem::path dir_;  // canonical; empty when external data is refused
  std::map<std::filesystem::path, std::shared_ptr<const MappedFile>> files_;
  std::string model_location_;                      // adopt_model_file's location, if any
  std::shared_ptr<const MappedFile> model_file_;
};

}  // namespace vkc::compiler::detail
