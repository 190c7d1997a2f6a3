// The `vulkan` backend: runs VulkanBackend delegates on a Vulkan device with the shader
// library's SPIR-V variants (docs/runtime.md, "The vulkan backend").
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "vkc/runtime/backend.h"

namespace vkc::runtime {

struct VulkanOptions {
  /// Enable VK_LAYER_KHRONOS_validation when installed; its warnings and errors go to stderr
  /// and are counted (vulkan_validation_messages()).
  bool validation = false;
  /// A shader library bundle file to use instead of the one compiled into vkc (empty: built in).
  std::filesystem::path shader_bundle;
};

/// VulkanOptions from the environment: VKC_VULKAN_VALIDATION=1, VKC_SHADER_BUNDLE=PATH.
VulkanOptions vulkan_options_from_env();

/// Creates the instance and device (a discrete GPU when present, else any device, e.g. Mesa
/// lavapipe) and loads the shader library. Throws RuntimeError when there is no device or the
/// bundle file cannot be read.
std::unique_ptr<Backend> make_vulkan_backend(const VulkanOptions& options);

/// The runtime operators (registry names) the vulkan backend has encoders for, sorted.
std::vector<std::string> vulkan_operators();

/// The name of the device make_vulkan_backend would pick; empty when there is none.
std::string vulkan_device_name();

/// Whether that device runs packed 4x8-bit integer dot products (shaderIntegerDotProduct, Vulkan
/// 1.3), emulated or not: where the q8ta and 8da4w _dot variants can run (VKC_VULKAN_INT_DOT=1).
bool vulkan_integer_dot_product();

/// Whether that device has subgroup arithmetic in compute shaders: where the matrix-vector linears'
/// _sg / _dot variants and the one-row attention (_dec) can run.
bool vulkan_subgroup_arithmetic();

/// Validation-layer warnings and errors reported in this process so far.
uint64_t vulkan_validation_messages();

/// How many dispatches of shader variant `name` (e.g. "conv2d_tiled_f32") the delegates loaded in
/// this process so far have recorded: which kernel the backend chose, for tests and tools.
uint64_t vulkan_variant_dispatches(const std::string& name);

/// Bytes of constants (weights) the delegates loaded in this process so far have copied into
/// device-local memory through a staging buffer, where the device had no room for them in memory
/// both device-local and host-visible (or VKC_VULKAN_STAGED_UPLOAD asked for it).
uint64_t vulkan_staged_upload_bytes();

/// How many memory barriers between dispatches the delegates loaded in this process so far have
/// recorded into their run command buffers (one goes only where a dispatch depends on an earlier one).
uint64_t vulkan_recorded_barriers();

/// How many dispatches the command buffers recorded in this process so far (delegates' runs and
/// decode loops) chain to the dispatch before them instead of a barrier (VKC_VULKAN_CHAIN).
uint64_t vulkan_recorded_chains();
/// How many dispatches those command buffers recorded with their variants' _chain twins (chained,
/// or under VKC_VULKAN_CHAIN_TWINS=1 unchained).
uint64_t vulkan_recorded_twins();

}  // namespace vkc::runtime
