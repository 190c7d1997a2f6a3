// `vkc compile --quant-report FILE.json`: what quantize-weights did, layer by layer.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "vkc/passes/quantize.h"

namespace vkc::compiler {

/// {"recipe", "summary": {...}, "layers": [{node, weight, kind, shape, quantized, reason | op, bits,
/// group_size, bytes_before, bytes_after, sqnr_db}]}.
std::string quant_report_json(std::string_view recipe, const std::vector<passes::QuantLayerReport>& layers);

/// One line for the compile summary: "quantized 14 of 15 layers (8da4w): 58.7 MiB -> 8.3 MiB, SQNR min 18.9 dB".
std::string quant_summary_line(std::string_view recipe, const std::vector<passes::QuantLayerReport>& layers);

}  // namespace vkc::compiler
