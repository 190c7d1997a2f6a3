// Internal: one-line error messages of the compiler layers -> Diagnostics.
#pragma once

#include <string>

#include "vkc/api/diagnostic.h"

namespace vkc::detail {

/// An error diagnostic; node and op are filled from a "node 'NAME' (OP)" in the message.
Diagnostic error_from_message(std::string message);

}  // namespace vkc::detail
