// The `vulkan` backend: one device and shader library per backend, one VulkanDelegate per delegate.
#include <fmt/format.h>
#include <unistd.h>

#include <cstdlib>

#include "vk_delegate.h"
#include "vkc/runtime/vulkan.h"

#ifndef VKC_SHADER_BUNDLE_PATH
#define VKC_SHADER_BUNDLE_PATH ""
#endif

namespace vkc::runtime {
namespace {

namespace fs = std::filesystem;

class VulkanBackend final : public Backend {
 public:
  explicit VulkanBackend(std::shared_ptr<vk::Device> d) : dev_(std::move(d)) {}
  std::string_view name() const override { return "vulkan"; }
  bool can_run(std::string_view id) const override { return id == "VulkanBackend"; }
  std::unique_ptr<DelegateInstance> init(const serializer::BackendDelegate& d, const NamedDataMap& named) override {
    return std::make_unique<vk::VulkanDelegate>(dev_, d, named);
  }

 private:
  std::shared_ptr<vk::Device> dev_;
};

fs::path executable_dir() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path() : exe.parent_path();
}

}  // namespace

VulkanOptions vulkan_options_from_env() {
  VulkanOptions o;
  if (const char* v = std::getenv("VKC_VULKAN_VALIDATION")) o.validation = std::string(v) != "0" && *v;
  if (const char* b = std::getenv("VKC_SHADER_BUNDLE"); b && *b) o.shader_bundle = b;
  return o;
}

fs::path default_shader_bundle() {
  if (const char* b = std::getenv("VKC_SHADER_BUNDLE"); b && *b) return b;
  std::vector<fs::path> candidates;
  if (fs::path dir = executable_dir(); !dir.empty()) {
    candidates.push_back(dir / "vkc_shaders.vksl");
    candidates.push_back(dir / ".." / "share" / "vkc" / "vkc_shaders.vksl");
  }
  candidates.push_back(VKC_SHADER_BUNDLE_PATH);
  for (const fs::path& p : candidates) {
    std::error_code ec;
    if (!p.empty() && fs::is_regular_file(p, ec)) return p;
  }
  return VKC_SHADER_BUNDLE_PATH;
}

std::unique_ptr<Backend> make_vulkan_backend(const VulkanOptions& options) {
  const fs::path bundle = options.shader_bundle.empty() ? default_shader_bundle() : options.shader_bundle;
  auto dev = std::make_shared<vk::Device>();
  try {
    dev->library = codegen::ShaderLibrary::load(bundle);
  } catch (const std::exception& e) {
    throw RuntimeError(fmt::format("vulkan: cannot load the shader library ({}); set VKC_SHADER_BUNDLE", e.what()));
  }
  dev->ctx = vk::Context::create(options.validation);
  dev->pipelines = std::make_unique<vk::PipelineCache>(dev->ctx);
  return std::make_unique<VulkanBackend>(std::move(dev));
}

std::string vulkan_device_name() {
  try {
    return vk::Context::create(false)->device_name();
  } catch (const std::exception&) {
    return "";
  }
}

}  // namespace vkc::runtime
