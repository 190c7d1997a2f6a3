// Pre-quantized ONNX: com.microsoft MatMulNBits -> et_vk.linear_q4gsw (quantize-weights runs it).
#pragma once

#include <map>
#include <string>

#include "vkc/ir/graph.h"

namespace vkc::passes::quant {

/// Lowers every 4-bit MatMulNBits with symmetric blocks (no zero points, or all 8); any other is
/// left in ONNX form with its reason in `not_lowered` (so the partitioner reports it, never wrong).
void lower_matmul_nbits(ir::Graph& g, std::map<std::string, std::string>& not_lowered);

}  // namespace vkc::passes::quant
