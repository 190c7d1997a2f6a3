#include "vkc/compiler/inspect_gates.h"

#include <fmt/format.h>

#include <cctype>
#include <cmath>
#include <set>
#include <stdexcept>

#include "vkc/ir/op_families.h"
#include "vkc/serializer/build_program.h"

namespace vkc::compiler {
namespace {

std::vector<std::string> split_commas(const std::vector<std::string>& values) {
  std::vector<std::string> out;
  for (const std::string& v : values) {
    size_t start = 0;
    while (start <= v.size()) {
      const size_t comma = std::min(v.find(',', start), v.size());
      if (comma > start) out.push_back(v.substr(start, comma - start));
      start = comma + 1;
    }
  }
  return out;
}

std::string mib(uint64_t bytes) { return fmt::format("{:.1f} MiB", static_cast<double>(bytes) / (1 << 20)); }

}  // namespace

uint64_t parse_size(std::string_view text) {
  size_t digits = 0;
  while (digits < text.size() && (std::isdigit(static_cast<unsigned char>(text[digits])) || text[digits] == '.'))
    ++digits;
  const std::string number(text.substr(0, digits));
  const std::string_view unit = text.substr(digits);
  static const std::pair<std::string_view, double> kUnits[] = {
      {"", 1},           {"B", 1},          {"KB", 1e3},           {"MB", 1e6},          {"GB", 1e9},
      {"KiB", 1 << 10},  {"MiB", 1 << 20},  {"GiB", 1073741824.0}, {"K", 1 << 10},       {"M", 1 << 20},
      {"G", 1073741824.0}};
  double value = 0;
  try {
    size_t used = 0;
    value = std::stod(number, &used);
    if (used != number.size()) throw std::invalid_argument("");
  } catch (const std::exception&) {
    throw std::invalid_argument(fmt::format("--max-size '{}': expected a size such as 770MiB", text));
  }
  for (const auto& [name, factor] : kUnits)
    if (unit == name) return static_cast<uint64_t>(std::llround(value * factor));
  throw std::invalid_argument(fmt::format("--max-size '{}': unknown unit '{}' (B, KB, MB, GB, KiB, MiB, GiB)", text, unit));
}

InspectGates make_gates(const std::vector<std::string>& delegates, const std::vector<std::string>& families,
                        const std::string& max_size) {
  InspectGates g;
  g.called_delegates = split_commas(delegates);
  g.families = split_commas(families);
  for (const std::string& f : g.families)
    if (!ir::find_family(f))
      throw std::invalid_argument(fmt::format("--require-family: unknown family '{}' (see vkc inspect --list-families)", f));
  if (!max_size.empty()) g.max_size = parse_size(max_size);
  return g;
}

std::vector<std::string> check_gates(const InspectReport& r, const InspectGates& g) {
  std::vector<std::string> failed;
  for (const std::string& backend : g.called_delegates) {
    bool called = false;
    for (const DelegateReport& d : r.delegates) called |= d.called && d.backend == backend;
    if (!called) failed.push_back(fmt::format("no called delegate '{}'", backend));
  }
  std::set<std::string> present;
  for (const DelegateReport& d : r.delegates)
    if (d.called && d.backend == serializer::kVulkanBackendId)
      for (const auto& [family, calls] : d.families)
        if (calls) present.insert(family);
  for (const std::string& want : g.families) {
    bool met = false;
    for (const std::string& have : present) met |= ir::family_meets(have, want);
    if (!met) failed.push_back(fmt::format("missing family '{}'", want));
  }
  if (g.max_size && r.file_size > *g.max_size)
    failed.push_back(fmt::format("size {} ({} bytes) > {} ({} bytes)", mib(r.file_size), r.file_size,
                                 mib(*g.max_size), *g.max_size));
  return failed;
}

std::string list_families_text() {
  std::string s;
  for (const ir::FamilyInfo& f : ir::op_families()) {
    s += fmt::format("{:<20} {}\n", f.name, f.description.empty() ? "(no description)" : f.description);
    if (!f.aliases.empty()) s += fmt::format("{:<20}   aliases: {}\n", "", fmt::join(f.aliases, ", "));
    if (!f.counts_as.empty()) s += fmt::format("{:<20}   also meets --require-family {}\n", "", f.counts_as);
    s += fmt::format("{:<20}   ops: {}\n", "", fmt::join(f.ops, ", "));
  }
  return s;
}

}  // namespace vkc::compiler
