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
