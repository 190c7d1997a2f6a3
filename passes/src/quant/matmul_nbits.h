// Pre-quantized ONNX: com.microsoft MatMulNBits -> et_vk.linear_q4gsw (+ the exact zero-point
// remainder) or, for 8 bits, a dequantized fp32 linear (quantize-weights runs it).
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "vkc/ir/graph.h"
#include "vkc/passes/quantize.h"

namespace vkc::passes::quant {

/// Lowers every MatMulNBits onnxruntime can run with the same arithmetic (4 or 8 bits, any K, zero
/// points of either type, trivial g_idx); any other is left in ONNX form with its reason in
/// `not_lowered` (so the partitioner reports it, never wrong). Each layer gets a `report` entry.
/// Returns the fp32 constants it made (dequantized weights, zero-point terms) that a --quantize
/// recipe must leave as they are.
std::set<const ir::Value*> lower_matmul_nbits(ir::Graph& g, std::map<std::string, std::string>& not_lowered,
                                              std::vector<QuantLayerReport>& report);

}  // namespace vkc::passes::quant
