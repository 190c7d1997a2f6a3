// --quantize RECIPE: BASE[:GROUP][-fp16][-embedding] (suffixes in any order).
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <stdexcept>

#include "vkc/passes/quantize.h"

namespace vkc::passes {
namespace {

constexpr std::string_view kKnown = "8da4w[:G], int4-weight-only[:G], int8-weight-only, each with optional "
                                    "-fp16 and -embedding suffixes (G: 32, 64, 128, 256)";

[[noreturn]] void fail(std::string_view text, std::string_view why) {
  throw std::invalid_argument(fmt::format("--quantize '{}': {} (recipes: {})", text, why, kKnown));
}

bool strip_suffix(std::string_view& s, std::string_view suffix) {
  if (!s.ends_with(suffix)) return false;
  s.remove_suffix(suffix.size());
  return true;
}

}  // namespace

QuantRecipe parse_quant_recipe(std::string_view text) {
  QuantRecipe r;
  r.text = std::string(text);
  std::string_view s = text;
  for (bool more = true; more;) {
    more = false;
    if (strip_suffix(s, "-fp16")) {
      if (r.force_fp16) fail(text, "-fp16 given twice");
      r.force_fp16 = more = true;
    }
    if (strip_suffix(s, "-embedding")) {
      if (r.embedding) fail(text, "-embedding given twice");
      r.embedding = more = true;
    }
  }
  std::string_view base = s, group;
  if (auto colon = s.find(':'); colon != std::string_view::npos) {
    base = s.substr(0, colon);
    group = s.substr(colon + 1);
  }
  if (base == "8da4w") {
    r.scheme = QuantScheme::Int8DynAct4Weight;
    r.group_size = 128;  // ExecuTorch quantize.py's default for 8da4w
  } else if (base == "int4-weight-only" || base == "4w") {
    r.scheme = QuantScheme::Int4WeightOnly;
    r.group_size = 256;  // quantize.py's default for 4w
  } else if (base == "int8-weight-only" || base == "int8") {
    r.scheme = QuantScheme::Int8WeightOnly;
    if (!group.empty()) fail(text, "int8-weight-only is per channel and takes no group size");
  } else {
    fail(text, fmt::format("unknown recipe '{}'", base));
  }
  if (!group.empty()) {
    int64_t g = 0;
    auto [end, ec] = std::from_chars(group.data(), group.data() + group.size(), g);
    if (ec != std::errc() || end != group.data() + group.size() ||
        std::find(std::begin(kQuantGroupSizes), std::end(kQuantGroupSizes), g) == std::end(kQuantGroupSizes))
      fail(text, fmt::format("group size '{}' is not one of 32, 64, 128, 256", group));
    r.group_size = g;
  }
  return r;
}

}  // namespace vkc::passes
