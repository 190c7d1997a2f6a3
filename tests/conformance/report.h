// Conformance results as JSON and as the markdown tables of docs/conformance.md.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "case_runner.h"

namespace vkc::conformance {

nlohmann::ordered_json to_json(const CaseResult& r);
CaseResult from_json(const nlohmann::json& j);
/// {"backend", "rtol", "atol", "totals": {folder: {...}}, "cases": [...]}
nlohmann::ordered_json report_json(const std::vector<CaseResult>& results, const CaseOptions& options);
/// Totals per folder and per ONNX op, failing cases, the most common unsupported reasons.
std::string report_markdown(const std::vector<CaseResult>& results, const CaseOptions& options);
/// Replaces the text between "<!-- NAME:begin -->" and "<!-- NAME:end -->" in `doc` (appends
/// the block when the markers are absent; creates the file when missing).
void update_doc_section(const std::filesystem::path& doc, const std::string& name, const std::string& content);

}  // namespace vkc::conformance
