// The backends this build has. A `vulkan` backend (a later session) is added here.
#include <fmt/format.h>

#include "cpu/cpu_backend.h"
#include "vkc/runtime/backend.h"

namespace vkc::runtime {

std::vector<std::string> backend_names() { return {"cpu"}; }

std::unique_ptr<Backend> make_backend(std::string_view name) {
  if (name == "cpu") return make_cpu_backend();
  if (name == "vulkan") throw RuntimeError("backend 'vulkan' is not built yet (cpu only for now)");
  throw RuntimeError(fmt::format("unknown backend '{}' (available: cpu)", name));
}

}  // namespace vkc::runtime
