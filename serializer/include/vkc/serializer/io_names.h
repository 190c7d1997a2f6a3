// The ONNX names of a plan's inputs and outputs, kept in the program as a named-data entry (key
// kIoNamesKey) so that tools can address tensors by name. ExecuTorch's runtime looks named data up
// by key only, so it ignores the entry. Text, one line per tensor: "in NAME" or "out NAME", in plan
// order.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace vkc::serializer {

inline constexpr const char* kIoNamesKey = "vkc.io_names";

/// The entry of plan `method`: kIoNamesKey for "forward", "vkc.io_names.<method>" for another plan
/// of the program (an encoder-decoder program's "encoder").
inline std::string io_names_key(const std::string& method) {
  return method == "forward" ? std::string(kIoNamesKey) : std::string(kIoNamesKey) + "." + method;
}
/// Whether a named-data key is one of the I/O-name entries (not a constant).
inline bool is_io_names_key(std::string_view key) {
  const std::string_view base = kIoNamesKey;
  return key == base || (key.size() > base.size() && key.substr(0, base.size() + 1) == std::string(base) + ".");
}

struct IoNames {
  std::vector<std::string> inputs, outputs;
};

std::vector<uint8_t> encode_io_names(const IoNames& names);
/// The names in `bytes`; nullopt when they are not a well-formed entry (tools then fall back to indices).
std::optional<IoNames> decode_io_names(std::span<const uint8_t> bytes);

}  // namespace vkc::serializer
