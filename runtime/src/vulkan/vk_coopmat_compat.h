// VK_KHR_cooperative_matrix's declarations, for Vulkan headers older than 1.3.255 (Debian
// bookworm ships 1.3.239); with newer headers, the headers' own. Shared with tests/gpu/.
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>

#ifndef VK_KHR_cooperative_matrix
#define VK_KHR_cooperative_matrix 1
#define VK_KHR_COOPERATIVE_MATRIX_EXTENSION_NAME "VK_KHR_cooperative_matrix"
constexpr VkStructureType kStructCoopmatFeaturesKHR = static_cast<VkStructureType>(1000506000);
constexpr VkStructureType kStructCoopmatPropertiesKHR = static_cast<VkStructureType>(1000506001);
struct VkPhysicalDeviceCooperativeMatrixFeaturesKHR {
  VkStructureType sType;
  void* pNext;
  VkBool32 cooperativeMatrix;
  VkBool32 cooperativeMatrixRobustBufferAccess;
};
struct VkCooperativeMatrixPropertiesKHR {
  VkStructureType sType;
  void* pNext;
  uint32_t MSize, NSize, KSize;
  uint32_t AType, BType, CType, ResultType;  // VkComponentTypeKHR: F16 0, F32 1
  VkBool32 saturatingAccumulation;
  uint32_t scope;                            // VkScopeKHR: Subgroup 3
};
using PFN_vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR = VkResult(VKAPI_PTR*)(VkPhysicalDevice, uint32_t*,
                                                                                      VkCooperativeMatrixPropertiesKHR*);
#else
constexpr VkStructureType kStructCoopmatFeaturesKHR = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_KHR;
constexpr VkStructureType kStructCoopmatPropertiesKHR = VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_KHR;
#endif

// VK_NV_cooperative_matrix2 (headers 1.4.303 and later): workgroup-scope matrices of flexible
// dimensions. Declared here under vkc's own names, for any header version.
constexpr const char* kCoopmat2ExtensionName = "VK_NV_cooperative_matrix2";
constexpr VkStructureType kStructCoopmat2FeaturesNV = static_cast<VkStructureType>(1000593000);
constexpr VkStructureType kStructCoopmatFlexiblePropertiesNV = static_cast<VkStructureType>(1000593001);
constexpr VkStructureType kStructCoopmat2PropertiesNV = static_cast<VkStructureType>(1000593002);
struct VkcCoopmat2FeaturesNV {
  VkStructureType sType;
  void* pNext;
  VkBool32 workgroup_scope, flexible_dimensions, reductions, conversions, per_element_operations, tensor_addressing,
      block_loads;
};
struct VkcCoopmat2PropertiesNV {
  VkStructureType sType;
  void* pNext;
  uint32_t workgroup_scope_max_workgroup_size, flexible_dimensions_max_dimension,
      workgroup_scope_reserved_shared_memory;
};
struct VkcCoopmatFlexiblePropertiesNV {
  VkStructureType sType;
  void* pNext;
  uint32_t m_granularity, n_granularity, k_granularity;
  uint32_t a_type, b_type, c_type, result_type;  // VkComponentTypeKHR
  VkBool32 saturating_accumulation;
  uint32_t scope;  // VkScopeKHR: Workgroup 2, Subgroup 3
  uint32_t workgroup_invocations;
};
using PfnCoopmatFlexiblePropertiesNV = VkResult(VKAPI_PTR*)(VkPhysicalDevice, uint32_t*, VkcCoopmatFlexiblePropertiesNV*);
