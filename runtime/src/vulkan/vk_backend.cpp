// The `vulkan` backend: one device and shader library per backend, one VulkanDelegate per delegate.
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>

#include "vk_delegate.h"
#include "vkc/runtime/vulkan.h"
#include "vkc/shaders/bundle.h"

namespace vkc::runtime {
namespace {

class VulkanBackend final : public Backend {
 public:
  explicit VulkanBackend(std::shared_ptr<vk::Device> d) : dev_(std::move(d)) {}
  std::string_view name() const override { return "vulkan"; }
  bool can_run(std::string_view id) const override { return id == "VulkanBackend"; }
  std::unique_ptr<DelegateInstance> init(const serializer::BackendDelegate& d, const NamedDataMap& named) override {
    return std::make_unique<vk::VulkanDelegate>(dev_, d, named);
  }
  std::unique_ptr<DelegateInstance> init_shared(const serializer::BackendDelegate& d, const NamedDataMap& named,
                                                std::shared_ptr<SharedDelegateState>& shared) override {
    return std::make_unique<vk::VulkanDelegate>(dev_, d, named, &shared);
  }

 private:
  std::shared_ptr<vk::Device> dev_;
};

}  // namespace

VulkanOptions vulkan_options_from_env() {
  VulkanOptions o;
  if (const char* v = std::getenv("VKC_VULKAN_VALIDATION")) o.validation = std::string(v) != "0" && *v;
  if (const char* b = std::getenv("VKC_SHADER_BUNDLE"); b && *b) o.shader_bundle = b;
  return o;
}

std::unique_ptr<Backend> make_vulkan_backend(const VulkanOptions& options) {
  auto dev = std::make_shared<vk::Device>();
  try {
    if (!options.shader_bundle.empty()) {
      dev->library = codegen::ShaderLibrary::load(options.shader_bundle);
    } else {
      const auto bytes = shaders::embedded_bundle();
      dev->library = codegen::ShaderLibrary::from_static_bytes(bytes, "built-in bundle");
    }
  } catch (const std::exception& e) {
    throw RuntimeError(fmt::format("vulkan: cannot load the shader library ({})", e.what()));
  }
  dev->ctx = vk::Context::create(options.validation);
  dev->pipelines = std::make_unique<vk::PipelineCache>(dev->ctx, &dev->library);
  return std::make_unique<VulkanBackend>(std::move(dev));
}

std::vector<std::string> vulkan_operators() {
  std::vector<std::string> out;
  for (const auto& [name, fn] : vk::vulkan_ops()) out.push_back(name);
  std::sort(out.begin(), out.end());
  return out;
}

std::string vulkan_device_name() {
  try {
    return vk::Context::create(false)->device_name();
  } catch (const std::exception&) {
    return "";
  }
}

bool vulkan_integer_dot_product() {
  try {
    return vk::Context::create(false)->int_dot();
  } catch (const std::exception&) {
    return false;
  }
}

bool vulkan_subgroup_arithmetic() {
  try {
    return vk::Context::create(false)->subgroup_arithmetic();
  } catch (const std::exception&) {
    return false;
  }
}

}  // namespace vkc::runtime
