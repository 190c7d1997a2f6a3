// ONNX types and tensor literals -> IR types and bytes.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>

#include "vkc/ir/attribute.h"
#include "vkc/ir/dtype.h"
#include "vkc/ir/shape.h"

namespace onnx {
class ModelProto;
class TensorProto;
class TypeProto;
}  // namespace onnx

namespace vkc::compiler::detail {

class ExternalData;

/// IR type of a value's ONNX type: dim_value -> static Dim, dim_param -> symbolic Dim, neither ->
/// unknown Dim. Anything vkc cannot describe (no type, unknown rank, not a tensor) -> Undefined.
ir::TensorType tensor_type_from_onnx(const onnx::TypeProto& type);

/// Reads tensor literals (initializers, tensor attributes) of one model.
class TensorReader {
 public:
  /// `model` owns the literals read; `external` resolves external data.
  TensorReader(std::shared_ptr<const onnx::ModelProto> model, ExternalData& external)
      : model_(std::move(model)), external_(external) {}

  /// Type and bytes of `t` (`what` names it in errors: "initializer 'W'"). raw_data is viewed in
  /// place inside the model, external data inside its file's mapping; typed fields (float_data,
  /// int32_data, ...) are converted to owned little-endian bytes.
  ir::TensorAttr read(const onnx::TensorProto& t, std::string_view what) const;

 private:
  std::shared_ptr<const onnx::ModelProto> model_;
  ExternalData& external_;
};

}  // namespace vkc::compiler::detail
