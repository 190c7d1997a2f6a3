// Reading and making constant tensors inside passes.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "vkc/ir/graph.h"

namespace vkc::passes {

/// Elements of a constant f32/f16/f64 tensor as float; nullopt for other dtypes or non-constants.
std::optional<std::vector<float>> constant_floats(const ir::Value* v);
/// Elements of a constant integer tensor as int64; nullopt otherwise.
std::optional<std::vector<int64_t>> constant_ints(const ir::Value* v);
/// The single element of a constant numeric tensor with one element.
std::optional<double> constant_scalar(const ir::Value* v);
/// A new f32 constant.
ir::Value* add_f32_constant(ir::Graph& g, const std::string& name, const std::vector<int64_t>& shape,
                            const std::vector<float>& values);
/// A new f32 or f16 constant (`dtype`) of the given values.
ir::Value* add_float_constant(ir::Graph& g, const std::string& name, const std::vector<int64_t>& shape,
                              const std::vector<float>& values, ir::DType dtype);
/// A new int64 constant (indices, shapes, axes).
ir::Value* add_i64_constant(ir::Graph& g, const std::string& name, const std::vector<int64_t>& shape,
                            const std::vector<int64_t>& values);
/// A new standard ONNX node (opset 13) after `from`, named after it, with one output of `type`;
/// returns that output. For rewrites into operators lowering already knows.
ir::Value* add_onnx_node(ir::Graph& g, const ir::Node* from, const char* op, std::vector<ir::Value*> inputs,
                         const ir::TensorType& type, ir::AttributeMap attrs = {});

}  // namespace vkc::passes
