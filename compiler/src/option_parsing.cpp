#include "vkc/compiler/option_parsing.h"

#include <fmt/format.h>

#include <charconv>
#include <limits>

namespace vkc::compiler {
namespace {

std::vector<int64_t> parse_positive_list(std::string_view text, char sep, std::string_view what) {
  std::vector<int64_t> out;
  size_t start = 0;
  while (true) {
    const size_t end = text.find(sep, start);
    const std::string_view item = text.substr(start, end == std::string_view::npos ? text.npos : end - start);
    int64_t v = 0;
    auto [ptr, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
    if (item.empty() || ec != std::errc() || ptr != item.data() + item.size() || v <= 0)
      throw OptionError(fmt::format("{}: '{}' is not a positive integer", what, item));
    out.push_back(v);
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return out;
}

}  // namespace

std::pair<std::string, std::vector<int64_t>> parse_input_shape(std::string_view text) {
  const size_t eq = text.rfind('=');
  if (eq == std::string_view::npos || eq == 0 || eq + 1 == text.size())
    throw OptionError(fmt::format("--input-shape '{}': expected NAME=D1xD2x...", text));
  return {std::string(text.substr(0, eq)),
          parse_positive_list(text.substr(eq + 1), 'x', fmt::format("--input-shape '{}'", text))};
}

std::pair<std::string, std::vector<int64_t>> parse_dim(std::string_view text) {
  const size_t eq = text.rfind('=');
  if (eq == std::string_view::npos || eq == 0 || eq + 1 == text.size())
    throw OptionError(fmt::format("--dim '{}': expected NAME=VALUE or NAME=V1,V2,..., e.g. sequence=128", text));
  const auto v = parse_positive_list(text.substr(eq + 1), ',', fmt::format("--dim '{}'", text));
  for (size_t i = 0; i < v.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (v[i] == v[j]) throw OptionError(fmt::format("--dim '{}': {} is listed twice", text, v[i]));
  return {std::string(text.substr(0, eq)), v};
}

std::optional<std::pair<std::string, std::pair<int64_t, int64_t>>> parse_dim_range(std::string_view text) {
  const size_t eq = text.rfind('=');
  const size_t dots = text.find("..", eq == std::string_view::npos ? 0 : eq);
  if (eq == std::string_view::npos || dots == std::string_view::npos) return std::nullopt;
  const std::string what = fmt::format("--dim '{}'", text);
  if (eq == 0) throw OptionError(what + ": expected NAME=MIN..MAX, e.g. sequence=1..128");
  const auto lo = parse_positive_list(text.substr(eq + 1, dots - eq - 1), ',', what);
  const auto hi = parse_positive_list(text.substr(dots + 2), ',', what);
  if (lo.size() != 1 || hi.size() != 1) throw OptionError(what + ": expected NAME=MIN..MAX, e.g. sequence=1..128");
  if (lo[0] >= hi[0]) throw OptionError(fmt::format("{}: MIN {} must be below MAX {}", what, lo[0], hi[0]));
  return std::pair{std::string(text.substr(0, eq)), std::pair{lo[0], hi[0]}};
}

std::pair<std::string, std::string> parse_input_value(std::string_view text) {
  const size_t eq = text.find('=');
  if (eq == std::string_view::npos || eq == 0 || eq + 1 == text.size())
    throw OptionError(fmt::format("--input-value '{}': expected NAME=V[,V...], e.g. sr=16000", text));
  return {std::string(text.substr(0, eq)), std::string(text.substr(eq + 1))};
}

serializer::TextureLimits parse_texture_limits(std::string_view text) {
  const auto v = parse_positive_list(text, ',', fmt::format("--texture-limits '{}'", text));
  if (v.size() != 3) throw OptionError(fmt::format("--texture-limits '{}': expected X,Y,Z", text));
  for (int64_t x : v)
    if (x > std::numeric_limits<uint32_t>::max())
      throw OptionError(fmt::format("--texture-limits '{}': {} does not fit in 32 bits", text, x));
  return {static_cast<uint32_t>(v[0]), static_cast<uint32_t>(v[1]), static_cast<uint32_t>(v[2])};
}

}  // namespace vkc::compiler
