// Constant folding of ONNX operators with the CPU reference kernels: one folder
// per ONNX op, computing the node's outputs from constant inputs.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "vkc/ir/graph.h"
#include "vkc/kernels/host_tensor.h"

namespace vkc::passes::folding {

/// Inputs of the node being folded (nullopt for an omitted optional input).
using Inputs = std::vector<std::optional<kernels::HostTensor>>;
/// Computes the outputs; throws kernels::KernelError when the node cannot be folded.
using FoldFn = std::vector<kernels::HostTensor> (*)(const ir::Node&, const Inputs&);

/// The folder of an ONNX op type (default domain), or null.
FoldFn find_folder(std::string_view op_type);

}  // namespace vkc::passes::folding
