// The backends this build has.
#include <fmt/format.h>

#include "cpu/cpu_backend.h"
#include "vkc/runtime/backend.h"
#include "vkc/runtime/vulkan.h"

namespace vkc::runtime {

std::vector<std::string> backend_names() { return {"cpu", "vulkan"}; }

std::unique_ptr<Backend> make_backend(std::string_view name) {
  if (name == "cpu") return make_cpu_backend();
  if (name == "vulkan") return make_vulkan_backend(vulkan_options_from_env());
  throw RuntimeError(fmt::format("unknown backend '{}' (available: cpu, vulkan)", name));
}

}  // namespace vkc::runtime
