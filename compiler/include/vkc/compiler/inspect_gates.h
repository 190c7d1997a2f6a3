// Artifact gates on an inspected .pte (`vkc inspect --require-called-delegate B
// --require-family F,G --max-size 770MiB`), as ExecuTorch's CI gates quantized LLM artifacts.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "vkc/compiler/inspect.h"

namespace vkc::compiler {

struct InspectGates {
  std::vector<std::string> called_delegates;  // backend ids some plan must call
  std::vector<std::string> families;          // families (or aliases) called Vulkan delegates must contain
  std::optional<uint64_t> max_size;           // file size cap in bytes

  bool empty() const { return called_delegates.empty() && families.empty() && !max_size; }
};

/// "770MiB", "1.5GB", "4096", "12KiB" -> bytes (B, KB/MB/GB decimal, KiB/MiB/GiB binary).
/// Throws std::invalid_argument with one line.
uint64_t parse_size(std::string_view text);
/// Splits comma-separated values of repeated options; unknown families throw std::invalid_argument.
InspectGates make_gates(const std::vector<std::string>& delegates, const std::vector<std::string>& families,
                        const std::string& max_size);

/// What the file fails, one clause per gate ("missing family 'sdpa'", "size 812.0 MiB > 770.0 MiB");
/// empty when every gate passes. Families count only in Vulkan delegates some plan calls.
std::vector<std::string> check_gates(const InspectReport& r, const InspectGates& g);

/// `vkc inspect --list-families`: name, aliases, what meets it, description, operators.
std::string list_families_text();

}  // namespace vkc::compiler
