// The Vulkan instance, device and queue the `vulkan` backend runs on, and the buffers and images
// it allocates. One Context per backend; delegates share it.
#pragma once

#include <vulkan/vulkan.h>

#include <array>
#include <cstdint>
#include <memory>
#include <string>

namespace vkc::runtime::vk {

/// A zeroed Vulkan info struct with its sType (and pNext) set.
template <typename T>
T make_info(VkStructureType type, void* next = nullptr) {
  T t{};
  t.sType = type;
  t.pNext = next;
  return t;
}

/// Throws RuntimeError "vulkan: WHAT failed (VkResult N)" unless r is VK_SUCCESS.
void check(VkResult r, const char* what);

class Context;

/// A storage buffer with its own memory; mapped when host-visible.
struct Buffer {
  const Context* ctx = nullptr;
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  void* mapped = nullptr;
  VkDeviceSize size = 0;
  Buffer() = default;
  Buffer(Buffer&& o) noexcept { *this = std::move(o); }
  Buffer& operator=(Buffer&& o) noexcept;
  ~Buffer();
};

/// A 3-D storage image (optimal tiling, layout GENERAL once prepared) and its view.
struct Image {
  const Context* ctx = nullptr;
  VkImage image = VK_NULL_HANDLE;
  VkImageView view = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  VkFormat format = VK_FORMAT_UNDEFINED;
  std::array<uint32_t, 3> extents{1, 1, 1};
  Image() = default;
  Image(Image&& o) noexcept { *this = std::move(o); }
  Image& operator=(Image&& o) noexcept;
  ~Image();
};

/// Device memory several resources are bound to (a VkGraph memory object): they alias it.
struct SharedMemory {
  const Context* ctx = nullptr;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  VkDeviceSize size = 0;
  SharedMemory() = default;
  SharedMemory(SharedMemory&& o) noexcept { *this = std::move(o); }
  SharedMemory& operator=(SharedMemory&& o) noexcept;
  ~SharedMemory();
};

class Context {
 public:
  /// Picks a discrete GPU when there is one, else the first device with a compute queue.
  /// `validation`: enable VK_LAYER_KHRONOS_validation (when installed) with a messenger that
  /// prints each warning/error to stderr and counts it. Throws RuntimeError.
  static std::shared_ptr<Context> create(bool validation);
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  VkDevice device() const { return device_; }
  VkQueue queue() const { return queue_; }
  const VkPhysicalDeviceProperties& properties() const { return props_; }
  const std::string& device_name() const { return name_; }
  bool fp16() const { return fp16_; }
  /// shaderIntegerDotProduct is enabled (Vulkan 1.3 devices that have it).
  bool int_dot() const { return int_dot_; }
  /// The device reports the signed 4x8-bit packed dot product as accelerated
  /// (integerDotProduct4x8BitPackedSignedAccelerated: the H200 does, lavapipe does not).
  bool int_dot_accelerated() const { return int_dot_accelerated_; }
  /// Compute shaders have subgroup arithmetic (subgroupAdd, Vulkan 1.1's subgroup properties).
  bool subgroup_arithmetic() const { return subgroup_arithmetic_; }
  /// VKC_VULKAN_PIPELINE_STATS=1 on a device with VK_KHR_pipeline_executable_properties: each
  /// pipeline's compiler statistics (registers, shared memory, ...) are printed to stderr.
  bool pipeline_stats() const { return pipeline_stats_; }
  /// Cooperative matrices enabled with the 16x16x16 f16 x f16 -> f32 subgroup shape the
  /// coopmat shader variants use: KHR when the device has it, else NV, else none.
  enum class Coopmat { None, NV, KHR };
  Coopmat coopmat() const { return coopmat_; }
  bool validation() const { return messenger_ != VK_NULL_HANDLE; }

  enum class Mem { Device, Upload, Readback };
  /// Device: device-local when possible. Upload/Readback: host-visible, coherent and mapped
  /// (Upload prefers device-local too, Readback host-cached).
  Buffer make_buffer(VkDeviceSize bytes, Mem mem) const;
  /// A buffer holding `bytes` for shaders to read (constants, packed weights): in device-local
  /// memory the host maps where the device has room there (integrated GPUs, resizable BAR), else
  /// in device-local memory filled by transfers from a staging buffer (a discrete GPU's 256 MiB BAR
  /// heap, once full, would otherwise leave the weights in host memory, read across the bus at
  /// every use). VKC_VULKAN_STAGED_UPLOAD=1 takes the transfers wherever the device has
  /// device-local memory. Not mapped when staged.
  Buffer make_constant_buffer(const uint8_t* bytes, size_t size) const;
  Image make_image(VkFormat format, std::array<uint32_t, 3> extents) const;
  /// The same without memory, to be bound to a SharedMemory: create, query, allocate, bind.
  Buffer make_unbound_buffer(VkDeviceSize bytes) const;
  Image make_unbound_image(VkFormat format, std::array<uint32_t, 3> extents) const;
  VkMemoryRequirements requirements(const Buffer& b) const;
  VkMemoryRequirements requirements(const Image& im) const;
  /// Device-local memory for `req` (the largest size and alignment, the common type bits).
  SharedMemory allocate_shared(VkMemoryRequirements req) const;
  void bind(Buffer& b, const SharedMemory& m) const;
  void bind(Image& im, const SharedMemory& m) const;  // also creates the view

  VkCommandBuffer begin_commands() const;
  /// Ends, submits and waits for `cb`, then frees it.
  void submit_and_wait(VkCommandBuffer cb) const;
  /// Submits a recorded (reusable) command buffer and waits.
  void run(VkCommandBuffer cb) const;
  /// Submits a recorded command buffer to signal `fence` (reset here), without waiting.
  void submit(VkCommandBuffer cb, VkFence fence) const;
  /// Waits for `fence`, polling first for up to VKC_VULKAN_SPIN_US (see run()).
  void wait(VkFence fence) const;
  VkFence make_fence() const;
  void destroy_fence(VkFence fence) const;
  void free_commands(VkCommandBuffer cb) const;

 private:
  Context() = default;
  uint32_t memory_type(uint32_t bits, VkMemoryPropertyFlags want, VkMemoryPropertyFlags fallback) const;
  VkDeviceMemory allocate(VkMemoryRequirements req, VkMemoryPropertyFlags want, VkMemoryPropertyFlags fallback) const;
  /// Memory of a type with all of `flags` for `req`, or VK_NULL_HANDLE (no such type, or none left).
  VkDeviceMemory try_allocate(VkMemoryRequirements req, VkMemoryPropertyFlags flags) const;

  VkInstance instance_ = VK_NULL_HANDLE;
  VkDebugUtilsMessengerEXT messenger_ = VK_NULL_HANDLE;
  VkPhysicalDevice physical_ = VK_NULL_HANDLE;
  VkDevice device_ = VK_NULL_HANDLE;
  VkQueue queue_ = VK_NULL_HANDLE;
  VkCommandPool pool_ = VK_NULL_HANDLE;
  VkFence fence_ = VK_NULL_HANDLE;
  uint32_t queue_family_ = 0;
  VkPhysicalDeviceProperties props_{};
  VkPhysicalDeviceMemoryProperties mem_{};
  std::string name_;
  bool fp16_ = false;
  bool int_dot_ = false;
  bool int_dot_accelerated_ = false;
  bool subgroup_arithmetic_ = false;
  bool pipeline_stats_ = false;
  Coopmat coopmat_ = Coopmat::None;
};

}  // namespace vkc::runtime::vk
