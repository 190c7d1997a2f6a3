// Diagnostics: how the vkc API reports problems (it does not throw them).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace vkc {

enum class Severity { Note, Warning, Error };

/// "note", "warning", "error".
std::string_view to_string(Severity severity);

struct Diagnostic {
  Severity severity = Severity::Error;
  /// One line, as `vkc` prints it after "vkc: error: ".
  std::string message;
  /// The ONNX node concerned and its operator ("Erf", "com.microsoft::Gelu"), when there is one.
  std::string node;
  std::string op;

  /// "error: MESSAGE" (the message already names the node where there is one).
  std::string str() const;
  bool operator==(const Diagnostic&) const = default;
};

/// True when any diagnostic is an error.
bool has_errors(const std::vector<Diagnostic>& diagnostics);

}  // namespace vkc
