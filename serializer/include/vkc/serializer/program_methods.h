// Programs of several methods: a compiled program's "forward" plan added to another program under
// a name of its own (an encoder-decoder program's "encoder", docs/encoder-decoder.md).
#pragma once

#include <string>

#include "vkc/serializer/program.h"

namespace vkc::serializer {

/// The plan of an encoder-decoder program that computes the decoder step's context inputs, in
/// order, from the encoder's inputs.
inline constexpr const char* kEncoderMethod = "encoder";

/// Moves `from`'s "forward" plan into `into` as plan `name`, with its I/O names (io_names_key)
/// and constants; named data both hold under one key (constants are keyed by their hash) is
/// stored once. Throws SerializeError when `into` has a plan `name` or `from` no "forward".
void add_method(Program& into, Program from, const std::string& name);

}  // namespace vkc::serializer
