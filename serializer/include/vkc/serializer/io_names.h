// The ONNX names of a plan's inputs and outputs, kept in the program as a named-data entry (key
// kIoNamesKey) so that tools can address tensors by name. ExecuTorch's runtime looks named data up
// by key only, so it ignores the entry. Text, one line per tensor: "in NAME" or "out NAME", in plan
// order.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace vkc::serializer {

inline constexpr const char* kIoNamesKey = "vkc.io_names";

struct IoNames {
  std::vector<std::string> inputs, outputs;
};

std::vector<uint8_t> encode_io_names(const IoNames& names);
/// The names in `bytes`; nullopt when they are not a well-formed entry (tools then fall back to indices).
std::optional<IoNames> decode_io_names(std::span<const uint8_t> bytes);

}  // namespace vkc::serializer
