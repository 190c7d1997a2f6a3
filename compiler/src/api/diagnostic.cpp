#include "vkc/api/diagnostic.h"

#include <algorithm>

#include "error_diagnostic.h"

namespace vkc {

std::string_view to_string(Severity severity) {
  switch (severity) {
    case Severity::Note: return "note";
    case Severity::Warning: return "warning";
    case Severity::Error: return "error";
  }
  return "error";
}

std::string Diagnostic::str() const { return std::string(to_string(severity)) + ": " + message; }

bool has_errors(const std::vector<Diagnostic>& diagnostics) {
  return std::any_of(diagnostics.begin(), diagnostics.end(),
                     [](const Diagnostic& d) { return d.severity == Severity::Error; });
}

namespace detail {

// The importer and the passes name nodes as "node 'NAME' (OP)".
Diagnostic error_from_message(std::string message) {
  Diagnostic d{Severity::Error, std::move(message), {}, {}};
  const std::string& m = d.message;
  const size_t start = m.find("node '");
  if (start == std::string::npos) return d;
  const size_t name_begin = start + 6;
  const size_t name_end = m.find("' (", name_begin);
  if (name_end == std::string::npos) return d;
  const size_t op_end = m.find(')', name_end + 3);
  if (op_end == std::string::npos) return d;
  d.node = m.substr(name_begin, name_end - name_begin);
  d.op = m.substr(name_end + 3, op_end - name_end - 3);
  return d;
}

}  // namespace detail
}  // namespace vkc
