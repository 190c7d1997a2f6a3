#include "vkc/api/inspect.h"

#include <new>

#include "error_diagnostic.h"

namespace vkc {
namespace {

template <typename Read>
InspectResult run(Read read) {
  InspectResult r;
  try {
    r.report = read();
    r.ok = true;
  } catch (const std::bad_alloc&) {
    throw;
  } catch (const std::exception& e) {
    r.diagnostics.push_back(detail::error_from_message(e.what()));
  } catch (...) {
    r.diagnostics.push_back(detail::error_from_message("inspect failed with an unknown exception"));
  }
  return r;
}

}  // namespace

std::string InspectResult::json() const { return compiler::inspect_json(report); }
std::string InspectResult::text() const { return compiler::inspect_text(report); }

InspectResult inspect(const std::filesystem::path& pte) {
  return run([&] { return compiler::inspect_file(pte); });
}

InspectResult inspect(std::span<const uint8_t> pte) {
  return run([&] { return compiler::inspect_bytes(pte); });
}

}  // namespace vkc
