// Encoder-decoder programs (vkc compile DECODER.onnx --encoder ENCODER.onnx --max-seq-len N,
// docs/encoder-decoder.md): the decoder step's context inputs (its float inputs, the encoder's
// output that cross-attention reads) are bound to the encoder's outputs, and what the step
// computes from them alone (the cross-attention keys and values of every layer) moves into the
// encoder method, computed once per input instead of once per token.
#pragma once

#include <string>

#include "vkc/ir/graph.h"

namespace vkc::compiler::detail {

/// What hoist_context did, for the compile's notes.
struct Hoisted {
  size_t nodes = 0;         // decoder nodes now computed by the encoder
  size_t context = 0;       // the decoder step's context inputs after the move
  std::string bound;        // "'encoder_hidden_states' <- 'last_hidden_state'", ...
};

/// Both graphs after the pass pipeline (the decoder's under --max-seq-len: tokens, input_pos, then
/// its context inputs). Binds each context input to an encoder output (by name when the names
/// agree, else in order; dtype and shape must match), moves the decoder nodes that read only
/// context inputs and constants into `encoder`, and makes the values the rest of the decoder
/// reads from them the encoder's outputs and the decoder's context inputs, in the same order.
/// Throws CompileError when the inputs and outputs do not fit.
Hoisted hoist_context(ir::Graph& encoder, ir::Graph& decoder);

}  // namespace vkc::compiler::detail
