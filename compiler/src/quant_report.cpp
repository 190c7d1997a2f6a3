#include "vkc/compiler/quant_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

namespace vkc::compiler {
namespace {

struct Totals {
  size_t quantized = 0, measured = 0;
  uint64_t before = 0, after = 0;
  double min_sqnr = 0, mean_sqnr = 0;
};

Totals totals(const std::vector<passes::QuantLayerReport>& layers) {
  Totals t;
  for (const auto& l : layers) {
    t.before += l.bytes_before;
    t.after += l.bytes_after;
    if (!l.quantized) continue;
    ++t.quantized;
    if (l.source != "recipe") continue;  // imported layers have no fp32 original to measure against
    t.min_sqnr = t.measured ? std::min(t.min_sqnr, l.sqnr_db) : l.sqnr_db;
    t.mean_sqnr += l.sqnr_db;
    ++t.measured;
  }
  if (t.measured) t.mean_sqnr /= static_cast<double>(t.measured);
  return t;
}

double round2(double x) { return std::round(x * 100.0) / 100.0; }

}  // namespace

std::string quant_report_json(std::string_view recipe, const std::vector<passes::QuantLayerReport>& layers) {
  const Totals t = totals(layers);
  nlohmann::ordered_json j;
  j["recipe"] = std::string(recipe);
  j["summary"] = {{"layers", layers.size()},
                  {"quantized", t.quantized},
                  {"bytes_before", t.before},
                  {"bytes_after", t.after},
                  {"min_sqnr_db", round2(t.min_sqnr)},
                  {"mean_sqnr_db", round2(t.mean_sqnr)}};
  auto& out = j["layers"] = nlohmann::ordered_json::array();
  for (const auto& l : layers) {
    nlohmann::ordered_json e = {{"node", l.node},          {"weight", l.weight},
                                {"kind", l.kind},          {"shape", {l.rows, l.cols}},
                                {"quantized", l.quantized}};
    e["source"] = l.source;
    if (l.source != "recipe") {
      e["bits"] = l.bits;
      e["group_size"] = l.group_size;
      e["zero_points"] = l.zero_points;
      e["op"] = l.op;
    }
    if (l.quantized) {
      e["op"] = l.op;
      e["bits"] = l.bits;
      e["group_size"] = l.group_size;
      if (l.padded_cols) e["padded_k"] = l.padded_cols;  // zero columns added up to the group size
    }
    if (!l.reason.empty()) e["reason"] = l.reason;
    e["bytes_before"] = l.bytes_before;
    e["bytes_after"] = l.bytes_after;
    if (l.quantized && l.source == "recipe") e["sqnr_db"] = round2(l.sqnr_db);
    out.push_back(std::move(e));
  }
  return j.dump(2) + "\n";
}

std::string quant_summary_line(std::string_view recipe, const std::vector<passes::QuantLayerReport>& layers) {
  const Totals t = totals(layers);
  std::string line = fmt::format("quantized {} of {} layers ({}): {:.1f} MiB -> {:.1f} MiB", t.quantized, layers.size(),
                                 recipe, static_cast<double>(t.before) / (1 << 20), static_cast<double>(t.after) / (1 << 20));
  if (t.measured) line += fmt::format(", SQNR min {:.1f} dB, mean {:.1f} dB", t.min_sqnr, t.mean_sqnr);
  if (t.measured < t.quantized) line += fmt::format(", {} imported", t.quantized - t.measured);
  return line;
}

}  // namespace vkc::compiler
