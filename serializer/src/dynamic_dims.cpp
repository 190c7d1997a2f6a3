#include "vkc/serializer/dynamic_dims.h"

#include <fmt/format.h>

#include <sstream>

#include "vkc/serializer/errors.h"

namespace vkc::serializer {

// Text form:  "sym NAME INPUT DIM MIN MAX" per symbol, then "dim VALUE DIM OFFSET C0 C1 ..." per
// dim (one coefficient per symbol), newline-separated.
std::vector<uint8_t> DynamicDims::encode() const {
  std::string s;
  for (const DynamicSymbol& y : symbols) s += fmt::format("sym {} {} {} {} {}\n", y.name, y.input, y.dim, y.min, y.max);
  for (const DynamicDim& d : dims) s += fmt::format("dim {} {} {} {}\n", d.value, d.dim, d.offset, fmt::join(d.coeffs, " "));
  return {s.begin(), s.end()};
}

DynamicDims DynamicDims::decode(std::span<const uint8_t> bytes) {
  DynamicDims t;
  std::istringstream in(std::string(bytes.begin(), bytes.end()));
  std::string line;
  size_t n = 0;
  auto bad = [&](const std::string& what) {
    throw SerializeError(fmt::format("{} line {}: {}", kDynamicDimsKey, n, what));
  };
  while (std::getline(in, line)) {
    ++n;
    std::istringstream l(line);
    std::string kind;
    l >> kind;
    if (kind == "sym") {
      if (!t.dims.empty()) bad("a symbol after the dims");
      DynamicSymbol y;
      if (!(l >> y.name >> y.input >> y.dim >> y.min >> y.max) || y.min < 0 || y.min > y.max) bad("malformed symbol");
      t.symbols.push_back(std::move(y));
    } else if (kind == "dim") {
      DynamicDim d;
      if (!(l >> d.value >> d.dim >> d.offset)) bad("malformed dim");
      d.coeffs.resize(t.symbols.size());
      for (int64_t& c : d.coeffs)
        if (!(l >> c)) bad("fewer coefficients than symbols");
      t.dims.push_back(std::move(d));
    } else {
      bad(fmt::format("unknown entry '{}'", kind));
    }
    std::string rest;
    if (l >> rest) bad("trailing text");
  }
  if (t.symbols.empty()) throw SerializeError(fmt::format("{}: no symbols", kDynamicDimsKey));
  return t;
}

std::vector<int64_t> DynamicDims::symbol_values(std::span<const std::vector<int64_t>> input_shapes) const {
  std::vector<int64_t> s;
  for (const DynamicSymbol& y : symbols) {
    if (y.input >= input_shapes.size() || y.dim >= input_shapes[y.input].size())
      throw SerializeError(fmt::format("dim '{}' is dim {} of input {}, which the inputs given lack", y.name, y.dim, y.input));
    const int64_t v = input_shapes[y.input][y.dim];
    if (v < y.min || v > y.max)
      throw SerializeError(fmt::format("input {} dim {} ('{}') is {}; the program takes {} to {}", y.input, y.dim,
                                       y.name, v, y.min, y.max));
    s.push_back(v);
  }
  return s;
}

VkGraph DynamicDims::resized(const VkGraph& graph, std::span<const int64_t> symbols) const {
  if (symbols.size() != this->symbols.size())
    throw SerializeError(fmt::format("{} symbol values for {} symbols", symbols.size(), this->symbols.size()));
  VkGraph g = graph;
  for (const DynamicDim& d : dims) {
    auto* t = d.value < g.values.size() ? std::get_if<VkTensor>(&g.values[d.value]) : nullptr;
    if (!t || d.dim >= t->dims.size())
      throw SerializeError(fmt::format("{}: value {} dim {} is not a tensor dim", kDynamicDimsKey, d.value, d.dim));
    int64_t v = d.offset, term = 0;
    bool overflow = false;
    for (size_t k = 0; k < symbols.size(); ++k)
      overflow = overflow || __builtin_mul_overflow(d.coeffs[k], symbols[k], &term) || __builtin_add_overflow(v, term, &v);
    if (overflow || v < 0 || v > static_cast<int64_t>(t->dims[d.dim]))
      throw SerializeError(fmt::format("{}: value {} dim {} would be {}, outside [0, {}]", kDynamicDimsKey, d.value,
                                       d.dim, v, t->dims[d.dim]));
    t->dims[d.dim] = static_cast<uint32_t>(v);
  }
  return g;
}

}  // namespace vkc::serializer
