// vkc::inspect: what a .pte holds, as `vkc inspect --json` prints it.
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "vkc/api/diagnostic.h"
#include "vkc/compiler/inspect.h"

namespace vkc {

/// The structures `vkc inspect` prints (plans, delegates, decoded options, operator counts).
using InspectReport = compiler::InspectReport;
using DelegateReport = compiler::DelegateReport;
using PlanReport = compiler::PlanReport;

struct InspectResult {
  bool ok = false;
  std::vector<Diagnostic> diagnostics;  // one error naming what is wrong when !ok
  InspectReport report;

  explicit operator bool() const { return ok; }
  /// `vkc inspect --json` / `vkc inspect` output for `report`.
  std::string json() const;
  std::string text() const;
};

/// Reads and decodes a .pte file. No exception escapes but std::bad_alloc.
InspectResult inspect(const std::filesystem::path& pte);
/// The same for .pte bytes in memory (report.path is "<pte bytes>").
InspectResult inspect(std::span<const uint8_t> pte);

}  // namespace vkc
