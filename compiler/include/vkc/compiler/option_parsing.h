// Parsing of command-line option values, shared by the CLI and its tests.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "vkc/serializer/compile_options.h"

namespace vkc::compiler {

struct OptionError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

/// "NAME=1x3x224x224" -> {"NAME", {1,3,224,224}}. The last '=' splits, so names may contain '='.
std::pair<std::string, std::vector<int64_t>> parse_input_shape(std::string_view text);
/// "sequence=128" -> {"sequence", {128}}, "sequence=16,64" -> {"sequence", {16, 64}} (--dim);
/// throws OptionError.
std::pair<std::string, std::vector<int64_t>> parse_dim(std::string_view text);
/// "sequence=1..64" -> {"sequence", {1, 64}} (--dim with a range); nullopt when the value is not
/// a range; throws OptionError for a malformed one (MIN must be positive and below MAX).
std::optional<std::pair<std::string, std::pair<int64_t, int64_t>>> parse_dim_range(std::string_view text);
/// --input-value NAME=V[,V...] -> (NAME, "V[,V...]"); the values are read in the input's type at import.
std::pair<std::string, std::string> parse_input_value(std::string_view text);
/// "X,Y,Z" with positive 32-bit values.
serializer::TextureLimits parse_texture_limits(std::string_view text);

}  // namespace vkc::compiler
