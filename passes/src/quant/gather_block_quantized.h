// com.microsoft GatherBlockQuantized: an embedding lookup in a block-quantized table, as
// onnxruntime-genai's builder writes a tied int4 embedding (the LM head's MatMulNBits weight,
// reshaped to [V, D / 2] bytes):
//   out = Gather(W, indices, gather_axis),  W[v, k] = scale[v, k / block] * (q[v, k] - z[v, k / block])
// q: 4-bit values packed two to a uint8 byte (element 2j in the low nibble), or 8-bit; z: zero points
// packed alike, 2^(bits-1) when absent (MatMulNBits' convention). The table is dequantized at compile
// time into a float constant of the scales' dtype (a --quantize recipe with -embedding can pack it
// again) and read by a plain Gather.
#pragma once

#include <string>

#include "vkc/ir/graph.h"

namespace vkc::passes::quant {

/// The dequantized Gather standing for `n` (inserted before it), or null with `why` set when `n`
/// is a form this does not compute (data, scales or zero points not constant, gather or quantize
/// axis other than the table's rows and columns, bits other than 4 or 8).
ir::Value* expand_gather_block_quantized(ir::Graph& g, ir::Node* n, std::string& why);

}  // namespace vkc::passes::quant
