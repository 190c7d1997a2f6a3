#include "vkc/serializer/io_names.h"

#include <string_view>

namespace vkc::serializer {

std::vector<uint8_t> encode_io_names(const IoNames& names) {
  std::string text;
  auto add = [&](const char* kind, const std::string& name) {
    text += kind;
    for (char c : name) text += c == '\n' ? ' ' : c;  // a name never spans lines
    text += '\n';
  };
  for (const auto& n : names.inputs) add("in ", n);
  for (const auto& n : names.outputs) add("out ", n);
  return {text.begin(), text.end()};
}

std::optional<IoNames> decode_io_names(std::span<const uint8_t> bytes) {
  const std::string_view text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  IoNames names;
  size_t at = 0;
  while (at < text.size()) {
    const size_t end = text.find('\n', at);
    if (end == std::string_view::npos) return std::nullopt;
    const std::string_view line = text.substr(at, end - at);
    if (line.starts_with("in ")) names.inputs.emplace_back(line.substr(3));
    else if (line.starts_with("out ")) names.outputs.emplace_back(line.substr(4));
    else return std::nullopt;
    at = end + 1;
  }
  return names;
}

}  // namespace vkc::serializer
