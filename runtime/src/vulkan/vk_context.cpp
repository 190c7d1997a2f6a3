#include "vk_context.h"
#include "vk_coopmat_compat.h"

#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <cstring>
#include <vector>

#include "vkc/runtime/backend.h"
#include "vkc/runtime/vulkan.h"

namespace vkc::runtime {
namespace {
std::atomic<uint64_t> g_validation_messages{0};
std::atomic<uint64_t> g_staged_upload_bytes{0};
}  // namespace
uint64_t vulkan_validation_messages() { return g_validation_messages.load(); }
uint64_t vulkan_staged_upload_bytes() { return g_staged_upload_bytes.load(); }
}  // namespace vkc::runtime

namespace vkc::runtime::vk {
namespace {

VKAPI_ATTR VkBool32 VKAPI_CALL on_message(VkDebugUtilsMessageSeverityFlagBitsEXT, VkDebugUtilsMessageTypeFlagsEXT,
                                          const VkDebugUtilsMessengerCallbackDataEXT* data, void*) {
  g_validation_messages.fetch_add(1);
  std::fprintf(stderr, "vulkan validation: %s\n", data && data->pMessage ? data->pMessage : "(no message)");
  return VK_FALSE;
}

bool has_layer(const char* name) {
  uint32_t n = 0;
  vkEnumerateInstanceLayerProperties(&n, nullptr);
  std::vector<VkLayerProperties> layers(n);
  vkEnumerateInstanceLayerProperties(&n, layers.data());
  for (const auto& l : layers)
    if (std::strcmp(l.layerName, name) == 0) return true;
  return false;
}

bool has_device_extension(VkPhysicalDevice d, const char* name) {
  uint32_t n = 0;
  vkEnumerateDeviceExtensionProperties(d, nullptr, &n, nullptr);
  std::vector<VkExtensionProperties> exts(n);
  vkEnumerateDeviceExtensionProperties(d, nullptr, &n, exts.data());
  for (const auto& e : exts)
    if (std::strcmp(e.extensionName, name) == 0) return true;
  return false;
}

// Whether any of the device's cooperative-matrix properties (through the instance function
// `fn_name`, filling structs of `Props` with sType `type`) satisfies `want`.
template <class Props, class Want>
bool any_coopmat_property(VkInstance instance, VkPhysicalDevice d, const char* fn_name, VkStructureType type, Want want) {
  using Fn = VkResult(VKAPI_PTR*)(VkPhysicalDevice, uint32_t*, Props*);
  auto fn = reinterpret_cast<Fn>(vkGetInstanceProcAddr(instance, fn_name));
  uint32_t n = 0;
  if (!fn || fn(d, &n, nullptr) != VK_SUCCESS) return false;
  std::vector<Props> p(n, make_info<Props>(type));
  if (fn(d, &n, p.data()) != VK_SUCCESS) return false;
  for (const Props& e : p)
    if (want(e)) return true;
  return false;
}

// Whether the device lists the 16x16x16 f16 x f16 -> f32 (f32 result) subgroup shape. Component
// types and scope have the same values in both extensions: f16 0, f32 1, subgroup 3.
bool coopmat_shape(VkInstance instance, VkPhysicalDevice d, bool khr) {
  auto shape = [](const auto& e) {
    return e.MSize == 16 && e.NSize == 16 && e.KSize == 16 && e.AType == 0 && e.BType == 0 && e.CType == 1 &&
           e.scope == 3;
  };
  if (khr)
    return any_coopmat_property<VkCooperativeMatrixPropertiesKHR>(
        instance, d, "vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR", kStructCoopmatPropertiesKHR,
        [&](const VkCooperativeMatrixPropertiesKHR& e) { return shape(e) && e.ResultType == 1 && !e.saturatingAccumulation; });
  return any_coopmat_property<VkCooperativeMatrixPropertiesNV>(
      instance, d, "vkGetPhysicalDeviceCooperativeMatrixPropertiesNV", VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_NV,
      [&](const VkCooperativeMatrixPropertiesNV& e) { return shape(e) && e.DType == VK_COMPONENT_TYPE_FLOAT32_NV; });
}

int compute_family(VkPhysicalDevice d) {
  uint32_t n = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(d, &n, nullptr);
  std::vector<VkQueueFamilyProperties> fams(n);
  vkGetPhysicalDeviceQueueFamilyProperties(d, &n, fams.data());
  for (uint32_t i = 0; i < n; ++i)
    if (fams[i].queueFlags & VK_QUEUE_COMPUTE_BIT) return static_cast<int>(i);
  return -1;
}

}  // namespace

void check(VkResult r, const char* what) {
  if (r != VK_SUCCESS) throw RuntimeError(fmt::format("vulkan: {} failed (VkResult {})", what, static_cast<int>(r)));
}

std::shared_ptr<Context> Context::create(bool validation) {
  std::shared_ptr<Context> c(new Context());
  auto app = make_info<VkApplicationInfo>(VK_STRUCTURE_TYPE_APPLICATION_INFO);
  app.pApplicationName = "vkc";
  app.apiVersion = VK_API_VERSION_1_3;
  const char* layer = "VK_LAYER_KHRONOS_validation";
  const char* debug_ext = VK_EXT_DEBUG_UTILS_EXTENSION_NAME;
  validation = validation && has_layer(layer);
  auto ici = make_info<VkInstanceCreateInfo>(VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO);
  ici.pApplicationInfo = &app;
  if (validation) {
    ici.enabledLayerCount = 1;
    ici.ppEnabledLayerNames = &layer;
    ici.enabledExtensionCount = 1;
    ici.ppEnabledExtensionNames = &debug_ext;
  }
  const VkResult r = vkCreateInstance(&ici, nullptr, &c->instance_);
  if (r != VK_SUCCESS) throw RuntimeError(fmt::format("vulkan: no Vulkan instance (VkResult {})", static_cast<int>(r)));
  if (validation) {
    auto mci = make_info<VkDebugUtilsMessengerCreateInfoEXT>(VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT);
    mci.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
    mci.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                      VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
    mci.pfnUserCallback = on_message;
    auto create = reinterpret_cast<PFN_vkCreateDebugUtilsMessengerEXT>(
        vkGetInstanceProcAddr(c->instance_, "vkCreateDebugUtilsMessengerEXT"));
    if (create) check(create(c->instance_, &mci, nullptr, &c->messenger_), "vkCreateDebugUtilsMessengerEXT");
  }

  uint32_t n = 0;
  vkEnumeratePhysicalDevices(c->instance_, &n, nullptr);
  std::vector<VkPhysicalDevice> devices(n);
  vkEnumeratePhysicalDevices(c->instance_, &n, devices.data());
  int best = -1, best_score = -1;
  for (uint32_t i = 0; i < n; ++i) {
    VkPhysicalDeviceProperties p;
    vkGetPhysicalDeviceProperties(devices[i], &p);
    if (compute_family(devices[i]) < 0 || p.apiVersion < VK_API_VERSION_1_1) continue;
    const int score = p.deviceType == VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU   ? 3
                      : p.deviceType == VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU ? 2
                                                                                : 1;
    if (score > best_score) best = static_cast<int>(i), best_score = score;
  }
  if (best < 0) throw RuntimeError("vulkan: no Vulkan device with a compute queue");
  c->physical_ = devices[best];
  vkGetPhysicalDeviceProperties(c->physical_, &c->props_);
  vkGetPhysicalDeviceMemoryProperties(c->physical_, &c->mem_);
  c->name_ = c->props_.deviceName;
  c->queue_family_ = static_cast<uint32_t>(compute_family(c->physical_));

  // Features: enable what the shader library may use, where the device has it.
  auto dot = make_info<VkPhysicalDeviceShaderIntegerDotProductFeatures>(
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_INTEGER_DOT_PRODUCT_FEATURES);
  auto m4 = make_info<VkPhysicalDeviceMaintenance4Features>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_4_FEATURES, &dot);
  auto s8 = make_info<VkPhysicalDevice8BitStorageFeatures>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_8BIT_STORAGE_FEATURES, &m4);
  auto s16 = make_info<VkPhysicalDevice16BitStorageFeatures>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES, &s8);
  auto f16 = make_info<VkPhysicalDeviceShaderFloat16Int8Features>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES, &s16);
  auto have = make_info<VkPhysicalDeviceFeatures2>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &f16);
  const bool v13 = c->props_.apiVersion >= VK_API_VERSION_1_3;
  if (!v13) s8.pNext = nullptr;  // maintenance4 is core in 1.3 only
  // Cooperative matrices: queried only where the extension exists (a struct of a missing
  // extension in the chain is invalid usage), on 1.3 devices (the variants are SPIR-V 1.6).
  const bool has_khr = v13 && has_device_extension(c->physical_, VK_KHR_COOPERATIVE_MATRIX_EXTENSION_NAME);
  const bool has_nv = v13 && has_device_extension(c->physical_, VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME);
  auto mm = make_info<VkPhysicalDeviceVulkanMemoryModelFeatures>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_MEMORY_MODEL_FEATURES);
  auto cm_khr = make_info<VkPhysicalDeviceCooperativeMatrixFeaturesKHR>(kStructCoopmatFeaturesKHR);
  auto cm_nv = make_info<VkPhysicalDeviceCooperativeMatrixFeaturesNV>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV);
  if (has_khr || has_nv) {
    dot.pNext = &mm;
    mm.pNext = has_khr ? static_cast<void*>(&cm_khr) : static_cast<void*>(&cm_nv);
  }
  vkGetPhysicalDeviceFeatures2(c->physical_, &have);
  const bool coopmat_base = mm.vulkanMemoryModel && f16.shaderFloat16 && s16.storageBuffer16BitAccess && m4.maintenance4;
  if (coopmat_base && has_khr && cm_khr.cooperativeMatrix && coopmat_shape(c->instance_, c->physical_, true))
    c->coopmat_ = Coopmat::KHR;
  else if (coopmat_base && has_nv && !has_khr && coopmat_shape(c->instance_, c->physical_, false))
    c->coopmat_ = Coopmat::NV;

  // Integer dot products (core in 1.3): the q8ta kernels' _dot variants (OpSDot on 4x8-bit words).
  auto edot = make_info<VkPhysicalDeviceShaderIntegerDotProductFeatures>(
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_INTEGER_DOT_PRODUCT_FEATURES);
  edot.shaderIntegerDotProduct = v13 ? dot.shaderIntegerDotProduct : VK_FALSE;
  c->int_dot_ = edot.shaderIntegerDotProduct == VK_TRUE;
  if (c->int_dot_) {
    auto dp = make_info<VkPhysicalDeviceShaderIntegerDotProductProperties>(
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_INTEGER_DOT_PRODUCT_PROPERTIES);
    auto p2 = make_info<VkPhysicalDeviceProperties2>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &dp);
    vkGetPhysicalDeviceProperties2(c->physical_, &p2);
    c->int_dot_accelerated_ = dp.integerDotProduct4x8BitPackedSignedAccelerated == VK_TRUE;
  }
  {
    auto sg = make_info<VkPhysicalDeviceSubgroupProperties>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES);
    auto p2 = make_info<VkPhysicalDeviceProperties2>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &sg);
    vkGetPhysicalDeviceProperties2(c->physical_, &p2);
    c->subgroup_arithmetic_ = (sg.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT) != 0 &&
                              (sg.supportedOperations & VK_SUBGROUP_FEATURE_ARITHMETIC_BIT) != 0 &&
                              (sg.supportedOperations & VK_SUBGROUP_FEATURE_BASIC_BIT) != 0;
  }
  auto em4 = make_info<VkPhysicalDeviceMaintenance4Features>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_4_FEATURES,
                                                             &edot);
  em4.maintenance4 = m4.maintenance4;
  auto emm = make_info<VkPhysicalDeviceVulkanMemoryModelFeatures>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_MEMORY_MODEL_FEATURES);
  auto ecm_khr = make_info<VkPhysicalDeviceCooperativeMatrixFeaturesKHR>(kStructCoopmatFeaturesKHR);
  auto ecm_nv = make_info<VkPhysicalDeviceCooperativeMatrixFeaturesNV>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV);
  std::vector<const char*> extensions;
  if (c->coopmat_ != Coopmat::None) {
    emm.vulkanMemoryModel = VK_TRUE;
    ecm_khr.cooperativeMatrix = ecm_nv.cooperativeMatrix = VK_TRUE;
    edot.pNext = &emm;
    emm.pNext = c->coopmat_ == Coopmat::KHR ? static_cast<void*>(&ecm_khr) : static_cast<void*>(&ecm_nv);
    extensions.push_back(c->coopmat_ == Coopmat::KHR ? VK_KHR_COOPERATIVE_MATRIX_EXTENSION_NAME
                                                     : VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME);
  }
  auto es8 = make_info<VkPhysicalDevice8BitStorageFeatures>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_8BIT_STORAGE_FEATURES, v13 ? &em4 : nullptr);
  es8.storageBuffer8BitAccess = s8.storageBuffer8BitAccess;
  auto es16 = make_info<VkPhysicalDevice16BitStorageFeatures>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES, &es8);
  es16.storageBuffer16BitAccess = s16.storageBuffer16BitAccess;
  auto ef16 = make_info<VkPhysicalDeviceShaderFloat16Int8Features>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES, &es16);
  ef16.shaderFloat16 = f16.shaderFloat16;
  ef16.shaderInt8 = f16.shaderInt8;
  auto enable = make_info<VkPhysicalDeviceFeatures2>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &ef16);
  enable.features.shaderInt16 = have.features.shaderInt16;
  c->fp16_ = f16.shaderFloat16 && s16.storageBuffer16BitAccess;

  const float priority = 1.0f;
  auto qci = make_info<VkDeviceQueueCreateInfo>(VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO);
  qci.queueFamilyIndex = c->queue_family_;
  qci.queueCount = 1;
  qci.pQueuePriorities = &priority;
  auto dci = make_info<VkDeviceCreateInfo>(VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, &enable);
  dci.queueCreateInfoCount = 1;
  dci.pQueueCreateInfos = &qci;
  if (!v13 && has_device_extension(c->physical_, VK_KHR_MAINTENANCE_4_EXTENSION_NAME))
    extensions.push_back(VK_KHR_MAINTENANCE_4_EXTENSION_NAME);
  auto stats = make_info<VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR>(
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR);
  if (const char* env = std::getenv("VKC_VULKAN_PIPELINE_STATS");
      env && std::string_view(env) == "1" &&
      has_device_extension(c->physical_, VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME)) {
    stats.pipelineExecutableInfo = VK_TRUE;
    stats.pNext = enable.pNext;
    enable.pNext = &stats;
    extensions.push_back(VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME);
    c->pipeline_stats_ = true;
  }
  dci.enabledExtensionCount = static_cast<uint32_t>(extensions.size());
  dci.ppEnabledExtensionNames = extensions.data();
  check(vkCreateDevice(c->physical_, &dci, nullptr, &c->device_), "vkCreateDevice");
  vkGetDeviceQueue(c->device_, c->queue_family_, 0, &c->queue_);
  auto pci = make_info<VkCommandPoolCreateInfo>(VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO);
  pci.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  pci.queueFamilyIndex = c->queue_family_;
  check(vkCreateCommandPool(c->device_, &pci, nullptr, &c->pool_), "vkCreateCommandPool");
  auto fci = make_info<VkFenceCreateInfo>(VK_STRUCTURE_TYPE_FENCE_CREATE_INFO);
  check(vkCreateFence(c->device_, &fci, nullptr, &c->fence_), "vkCreateFence");
  return c;
}

Context::~Context() {
  if (device_) {
    vkDeviceWaitIdle(device_);
    if (fence_) vkDestroyFence(device_, fence_, nullptr);
    if (pool_) vkDestroyCommandPool(device_, pool_, nullptr);
    vkDestroyDevice(device_, nullptr);
  }
  if (messenger_) {
    auto destroy = reinterpret_cast<PFN_vkDestroyDebugUtilsMessengerEXT>(
        vkGetInstanceProcAddr(instance_, "vkDestroyDebugUtilsMessengerEXT"));
    if (destroy) destroy(instance_, messenger_, nullptr);
  }
  if (instance_) vkDestroyInstance(instance_, nullptr);
}

uint32_t Context::memory_type(uint32_t bits, VkMemoryPropertyFlags want, VkMemoryPropertyFlags fallback) const {
  for (VkMemoryPropertyFlags flags : {want, fallback})
    for (uint32_t i = 0; i < mem_.memoryTypeCount; ++i)
      if ((bits & (1u << i)) && (mem_.memoryTypes[i].propertyFlags & flags) == flags) return i;
  throw RuntimeError("vulkan: no suitable memory type");
}

VkDeviceMemory Context::allocate(VkMemoryRequirements req, VkMemoryPropertyFlags want,
                                 VkMemoryPropertyFlags fallback) const {
  auto mai = make_info<VkMemoryAllocateInfo>(VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO);
  mai.allocationSize = req.size;
  mai.memoryTypeIndex = memory_type(req.memoryTypeBits, want, fallback);
  VkDeviceMemory m = VK_NULL_HANDLE;
  VkResult r = vkAllocateMemory(device_, &mai, nullptr, &m);
  if (r != VK_SUCCESS && want != fallback) {  // e.g. a small host-visible device-local (BAR) heap is full
    mai.memoryTypeIndex = memory_type(req.memoryTypeBits, fallback, fallback);
    r = vkAllocateMemory(device_, &mai, nullptr, &m);
  }
  check(r, "vkAllocateMemory");
  return m;
}

Buffer Context::make_unbound_buffer(VkDeviceSize bytes) const {
  Buffer b;
  b.ctx = this;
  b.size = std::max<VkDeviceSize>(bytes, 16);
  // Every buffer is bound whole as a storage buffer; past the device's range a shader would
  // read zeros (lavapipe) or fault, so refuse it here.
  if (b.size > properties().limits.maxStorageBufferRange)
    throw RuntimeError(fmt::format("a tensor of {} bytes exceeds this device's maxStorageBufferRange ({} bytes)",
                                   b.size, properties().limits.maxStorageBufferRange));
  auto bci = make_info<VkBufferCreateInfo>(VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO);
  bci.size = b.size;
  bci.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  bci.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  check(vkCreateBuffer(device_, &bci, nullptr, &b.buffer), "vkCreateBuffer");
  return b;
}

VkDeviceMemory Context::try_allocate(VkMemoryRequirements req, VkMemoryPropertyFlags flags) const {
  for (uint32_t i = 0; i < mem_.memoryTypeCount; ++i) {
    if (!(req.memoryTypeBits & (1u << i)) || (mem_.memoryTypes[i].propertyFlags & flags) != flags) continue;
    auto mai = make_info<VkMemoryAllocateInfo>(VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO);
    mai.allocationSize = req.size;
    mai.memoryTypeIndex = i;
    VkDeviceMemory m = VK_NULL_HANDLE;
    if (vkAllocateMemory(device_, &mai, nullptr, &m) == VK_SUCCESS) return m;
  }
  return VK_NULL_HANDLE;
}

Buffer Context::make_constant_buffer(const uint8_t* bytes, size_t size) const {
  const VkMemoryPropertyFlags hv = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  // VKC_VULKAN_STAGED_UPLOAD: 1 stages wherever the device has device-local memory; a larger
  // number also sets the staging buffer's size in bytes (64 MiB otherwise).
  const char* env = std::getenv("VKC_VULKAN_STAGED_UPLOAD");
  const long forced = env ? std::strtol(env, nullptr, 10) : 0;
  const bool staged = forced > 0;
  Buffer b = make_unbound_buffer(std::max<VkDeviceSize>(size, 4));
  const VkMemoryRequirements req = requirements(b);
  VkDeviceMemory mapped = staged ? VK_NULL_HANDLE : try_allocate(req, hv | VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
  VkDeviceMemory local = mapped ? VK_NULL_HANDLE : try_allocate(req, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
  if (!mapped && !local) mapped = allocate(req, hv, hv);  // no device-local memory (left): host memory
  if (mapped) {
    b.memory = mapped;
    check(vkBindBufferMemory(device_, b.buffer, b.memory, 0), "vkBindBufferMemory");
    check(vkMapMemory(device_, b.memory, 0, VK_WHOLE_SIZE, 0, &b.mapped), "vkMapMemory");
    if (size > 0) std::memcpy(b.mapped, bytes, size);
    return b;
  }
  b.memory = local;
  check(vkBindBufferMemory(device_, b.buffer, b.memory, 0), "vkBindBufferMemory");
  // Through a staging buffer of at most 64 MiB, one transfer a piece.
  const size_t piece = std::min<size_t>(size, forced > 1 ? static_cast<size_t>(forced) : size_t{64} << 20);
  if (piece == 0) return b;
  Buffer stage = make_buffer(piece, Mem::Upload);
  for (size_t at = 0; at < size; at += piece) {
    const size_t n = std::min(piece, size - at);
    std::memcpy(stage.mapped, bytes + at, n);
    VkCommandBuffer cb = begin_commands();
    const VkBufferCopy region{0, at, n};
    vkCmdCopyBuffer(cb, stage.buffer, b.buffer, 1, &region);
    submit_and_wait(cb);
    g_staged_upload_bytes += n;
  }
  return b;
}

Buffer Context::make_buffer(VkDeviceSize bytes, Mem mem) const {
  Buffer b = make_unbound_buffer(bytes);
  const VkMemoryRequirements req = requirements(b);
  const VkMemoryPropertyFlags hv = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  b.memory = mem == Mem::Readback ? allocate(req, hv | VK_MEMORY_PROPERTY_HOST_CACHED_BIT, hv)
             : mem == Mem::Upload ? allocate(req, hv | VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, hv)
                                  : allocate(req, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, 0);
  check(vkBindBufferMemory(device_, b.buffer, b.memory, 0), "vkBindBufferMemory");
  if (mem != Mem::Device) check(vkMapMemory(device_, b.memory, 0, VK_WHOLE_SIZE, 0, &b.mapped), "vkMapMemory");
  return b;
}

Image Context::make_unbound_image(VkFormat format, std::array<uint32_t, 3> extents) const {
  Image im;
  im.ctx = this;
  im.format = format;
  im.extents = extents;
  auto ici = make_info<VkImageCreateInfo>(VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO);
  ici.imageType = VK_IMAGE_TYPE_3D;
  ici.format = format;
  ici.extent = {extents[0], extents[1], extents[2]};
  ici.mipLevels = 1;
  ici.arrayLayers = 1;
  ici.samples = VK_SAMPLE_COUNT_1_BIT;
  ici.tiling = VK_IMAGE_TILING_OPTIMAL;
  ici.usage = VK_IMAGE_USAGE_STORAGE_BIT;
  ici.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  ici.initialLayout = VK_IMAGE_LAYOUT_UNDEFINED;
  const auto& lim = props_.limits;
  if (extents[0] > lim.maxImageDimension3D || extents[1] > lim.maxImageDimension3D ||
      extents[2] > lim.maxImageDimension3D)
    throw RuntimeError(fmt::format("vulkan: texture extents ({},{},{}) exceed the device's maxImageDimension3D {}",
                                   extents[0], extents[1], extents[2], lim.maxImageDimension3D));
  check(vkCreateImage(device_, &ici, nullptr, &im.image), "vkCreateImage");
  return im;
}

namespace {

VkImageView make_view(VkDevice device, const Image& im) {
  auto vci = make_info<VkImageViewCreateInfo>(VK_STRUCTURE_TYPE_IMAGE_VIEW_CREATE_INFO);
  vci.image = im.image;
  vci.viewType = VK_IMAGE_VIEW_TYPE_3D;
  vci.format = im.format;
  vci.subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
  VkImageView view = VK_NULL_HANDLE;
  check(vkCreateImageView(device, &vci, nullptr, &view), "vkCreateImageView");
  return view;
}

}  // namespace

Image Context::make_image(VkFormat format, std::array<uint32_t, 3> extents) const {
  Image im = make_unbound_image(format, extents);
  im.memory = allocate(requirements(im), VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, 0);
  check(vkBindImageMemory(device_, im.image, im.memory, 0), "vkBindImageMemory");
  im.view = make_view(device_, im);
  return im;
}

VkMemoryRequirements Context::requirements(const Buffer& b) const {
  VkMemoryRequirements req;
  vkGetBufferMemoryRequirements(device_, b.buffer, &req);
  return req;
}

VkMemoryRequirements Context::requirements(const Image& im) const {
  VkMemoryRequirements req;
  vkGetImageMemoryRequirements(device_, im.image, &req);
  return req;
}

SharedMemory Context::allocate_shared(VkMemoryRequirements req) const {
  SharedMemory m;
  m.ctx = this;
  m.size = req.size;
  m.memory = allocate(req, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, 0);
  return m;
}

void Context::bind(Buffer& b, const SharedMemory& m) const {
  check(vkBindBufferMemory(device_, b.buffer, m.memory, 0), "vkBindBufferMemory");
}

void Context::bind(Image& im, const SharedMemory& m) const {
  check(vkBindImageMemory(device_, im.image, m.memory, 0), "vkBindImageMemory");
  im.view = make_view(device_, im);
}

VkCommandBuffer Context::begin_commands() const {
  auto ai = make_info<VkCommandBufferAllocateInfo>(VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO);
  ai.commandPool = pool_;
  ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  ai.commandBufferCount = 1;
  VkCommandBuffer cb = VK_NULL_HANDLE;
  check(vkAllocateCommandBuffers(device_, &ai, &cb), "vkAllocateCommandBuffers");
  auto bi = make_info<VkCommandBufferBeginInfo>(VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO);
  check(vkBeginCommandBuffer(cb, &bi), "vkBeginCommandBuffer");
  return cb;
}

void Context::run(VkCommandBuffer cb) const {
  submit(cb, fence_);
  wait(fence_);
}

void Context::submit(VkCommandBuffer cb, VkFence fence) const {
  auto si = make_info<VkSubmitInfo>(VK_STRUCTURE_TYPE_SUBMIT_INFO);
  si.commandBufferCount = 1;
  si.pCommandBuffers = &cb;
  check(vkResetFences(device_, 1, &fence), "vkResetFences");
  check(vkQueueSubmit(queue_, 1, &si, fence), "vkQueueSubmit");
}

void Context::wait(VkFence fence) const {
  // Poll the fence for up to VKC_VULKAN_SPIN_US microseconds before blocking: a driver's blocking
  // wait may sleep far longer than a small program runs. Default: 2 ms on a GPU, none on a CPU
  // device (lavapipe), whose work runs on the cores a spinning thread would take.
  static const char* env = std::getenv("VKC_VULKAN_SPIN_US");
  const long spin_us = env ? std::strtol(env, nullptr, 10) : props_.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU ? 0L : 2000L;
  if (spin_us > 0) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(spin_us);
    while (std::chrono::steady_clock::now() < until) {
      const VkResult r = vkGetFenceStatus(device_, fence);
      if (r == VK_SUCCESS) return;
      if (r != VK_NOT_READY) check(r, "vkGetFenceStatus");
    }
  }
  check(vkWaitForFences(device_, 1, &fence, VK_TRUE, UINT64_MAX), "vkWaitForFences");
}

VkFence Context::make_fence() const {
  auto fci = make_info<VkFenceCreateInfo>(VK_STRUCTURE_TYPE_FENCE_CREATE_INFO);
  VkFence f = VK_NULL_HANDLE;
  check(vkCreateFence(device_, &fci, nullptr, &f), "vkCreateFence");
  return f;
}

void Context::destroy_fence(VkFence fence) const {
  if (fence) vkDestroyFence(device_, fence, nullptr);
}

void Context::submit_and_wait(VkCommandBuffer cb) const {
  check(vkEndCommandBuffer(cb), "vkEndCommandBuffer");
  run(cb);
  free_commands(cb);
}

void Context::free_commands(VkCommandBuffer cb) const { vkFreeCommandBuffers(device_, pool_, 1, &cb); }

Buffer& Buffer::operator=(Buffer&& o) noexcept {
  std::swap(ctx, o.ctx), std::swap(buffer, o.buffer), std::swap(memory, o.memory);
  std::swap(mapped, o.mapped), std::swap(size, o.size);
  return *this;
}
Buffer::~Buffer() {
  if (!ctx) return;
  if (buffer) vkDestroyBuffer(ctx->device(), buffer, nullptr);
  if (memory) vkFreeMemory(ctx->device(), memory, nullptr);
}
SharedMemory& SharedMemory::operator=(SharedMemory&& o) noexcept {
  std::swap(ctx, o.ctx), std::swap(memory, o.memory), std::swap(size, o.size);
  return *this;
}
SharedMemory::~SharedMemory() {
  if (ctx && memory) vkFreeMemory(ctx->device(), memory, nullptr);
}
Image& Image::operator=(Image&& o) noexcept {
  std::swap(ctx, o.ctx), std::swap(image, o.image), std::swap(view, o.view), std::swap(memory, o.memory);
  std::swap(format, o.format), std::swap(extents, o.extents);
  return *this;
}
Image::~Image() {
  if (!ctx) return;
  if (view) vkDestroyImageView(ctx->device(), view, nullptr);
  if (image) vkDestroyImage(ctx->device(), image, nullptr);
  if (memory) vkFreeMemory(ctx->device(), memory, nullptr);
}

}  // namespace vkc::runtime::vk
