// Schemas of the ExecuTorch Vulkan runtime operators that lowered nodes call.
//
// A schema is written in ATen's notation, e.g.
//   "aten.avg_pool2d.default(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0,
//                             bool ceil_mode=False, bool count_include_pad=True, int? divisor_override=None)"
// A lowered node (domain kVulkanDomain, op_type = schema name) carries its tensor
// arguments as inputs, in schema order (nullptr for an absent optional tensor; a
// Tensor[] argument takes a run of inputs), and every other argument as an attribute
// named like the argument. Arguments left unset take the schema default when the
// payload is written: every argument in order, defaults filled, then the output.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "vkc/ir/attribute.h"

namespace vkc::ir {

enum class ArgKind {
  Tensor,      // Tensor, Tensor?
  TensorList,  // Tensor[]
  Int,         // int, SymInt
  IntList,     // int[], int[N], SymInt[]
  Float,       // float
  FloatList,   // float[]
  Bool,
  BoolList,
  Scalar,      // Scalar: int or float attribute
  String,
  None,        // ScalarType, Layout, Device, MemoryFormat: always serialized as None
};

struct ArgSpec {
  std::string name;
  ArgKind kind = ArgKind::Tensor;
  bool optional = false;      // "?": may be None
  bool kwarg_only = false;    // after "*"
  /// A scalar "SymInt": besides an attribute, it may be fed at run time by a trailing node input
  /// (an integer tensor after the tensor arguments), serialized as et_vk.select_as_symint(x, 0, 0).
  bool symint = false;
  std::optional<Attribute> default_value;  // parsed "=..." (None is std::monostate)
};

struct OpSchema {
  std::string name;           // runtime name, e.g. "aten.convolution.default"
  std::vector<ArgSpec> args;
  size_t num_outputs = 1;
  /// "-> Tensor[]": any number of outputs, always written as one ValueList.
  bool list_output = false;
  std::string family;         // operator family shown by `vkc inspect`, e.g. "convolution"

  /// Number of node inputs for a schema without Tensor[] (or the minimum with one).
  size_t num_tensor_args() const;
  bool has_tensor_list() const;
  /// How many of a node's `num_inputs` inputs, at the end, feed SymInt arguments (read at run time
  /// as et_vk.select_as_symint(x, 0, 0), not as tensors); 0 for a schema with a Tensor[].
  size_t num_symint_inputs(size_t num_inputs) const;
  /// Problems with a node's attributes: unknown names, wrong kinds, missing required values.
  /// `symint_inputs` trailing node inputs feed that many scalar SymInt arguments left unset.
  std::vector<std::string> check_attrs(const AttributeMap& attrs, size_t symint_inputs = 0) const;
};

/// Parses "name(args) -> outputs"; throws std::invalid_argument on malformed text.
OpSchema parse_op_schema(std::string_view text, std::string family);

}  // namespace vkc::ir
