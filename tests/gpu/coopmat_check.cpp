// coopmat_check: runs the cooperative-matrix matmul variants of the shader library (NV as
// compiled, KHR as rewritten by codegen) on a Vulkan 1.3 device, checks them against a CPU
// reference on a small problem and on samples of a large one, and prints TFLOP/s.
//   coopmat_check BUNDLE.vksl [--size N] [--iters I] [--require] [--spv FILE]...
// --spv adds a workgroup-scope module built from bench/gpu/coopmat2_tensor.comp (run where the
// device has VK_NV_cooperative_matrix2 with workgroup scope and flexible dimensions), named
// t_..., or a subgroup-scope VK_KHR_cooperative_matrix one (bench/gpu/coopmat_exp/), named s_....
// Exits 0 with "skipped" when no device has VK_NV/KHR_cooperative_matrix (e.g. lavapipe),
// unless --require is given. Built only with -DVKC_GPU_CHECKS=ON.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <list>
#include <random>
#include <string>

#include "vk_util.h"
#include "vkc/codegen/shader_library.h"

namespace {

struct Device {
  VkInstance instance = VK_NULL_HANDLE;
  VkPhysicalDevice pd = VK_NULL_HANDLE;
  VkDevice dev = VK_NULL_HANDLE;
  VkQueue queue = VK_NULL_HANDLE;
  uint32_t family = 0;
  bool nv = false, khr = false, full_subgroups = false, workgroup_scope = false;
  float timestamp_period = 1;
  VkCommandPool pool = VK_NULL_HANDLE;
  std::string name;
};

bool has_extension(VkPhysicalDevice pd, const char* name) {
  uint32_t n = 0;
  vkEnumerateDeviceExtensionProperties(pd, nullptr, &n, nullptr);
  std::vector<VkExtensionProperties> exts(n);
  vkEnumerateDeviceExtensionProperties(pd, nullptr, &n, exts.data());
  for (const auto& e : exts)
    if (std::string(e.extensionName) == name) return true;
  return false;
}

// Returns false (and says why) when no suitable device exists.
bool open_device(Device& d, std::string& why) {
  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.pApplicationName = "vkc coopmat_check";
  app.apiVersion = VK_API_VERSION_1_3;
  VkInstanceCreateInfo ici{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  ici.pApplicationInfo = &app;
  if (vkCreateInstance(&ici, nullptr, &d.instance) != VK_SUCCESS) return why = "no Vulkan 1.3 instance", false;
  uint32_t n = 0;
  vkEnumeratePhysicalDevices(d.instance, &n, nullptr);
  std::vector<VkPhysicalDevice> pds(n);
  vkEnumeratePhysicalDevices(d.instance, &n, pds.data());
  why = "no device with Vulkan 1.3 and VK_KHR/NV_cooperative_matrix (devices:";
  for (VkPhysicalDevice pd : pds) {
    VkPhysicalDeviceProperties props;
    vkGetPhysicalDeviceProperties(pd, &props);
    why += std::string(" ") + props.deviceName + ";";
    const bool nv = has_extension(pd, VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME);
    const bool khr = has_extension(pd, VK_KHR_COOPERATIVE_MATRIX_EXTENSION_NAME);
    if (props.apiVersion < VK_API_VERSION_1_3 || (!nv && !khr)) continue;
    d.pd = pd, d.nv = nv, d.khr = khr, d.name = props.deviceName;
    d.timestamp_period = props.limits.timestampPeriod;
    break;
  }
  why += ")";
  if (!d.pd) return false;

  uint32_t qn = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(d.pd, &qn, nullptr);
  std::vector<VkQueueFamilyProperties> qf(qn);
  vkGetPhysicalDeviceQueueFamilyProperties(d.pd, &qn, qf.data());
  for (d.family = 0; d.family < qn && !(qf[d.family].queueFlags & VK_QUEUE_COMPUTE_BIT); ++d.family) {
  }
  if (d.family == qn) return why = "no compute queue", false;

  VkPhysicalDeviceCooperativeMatrixFeaturesKHR khr_f{kStructCoopmatFeaturesKHR, nullptr, VK_FALSE, VK_FALSE};
  VkPhysicalDeviceCooperativeMatrixFeaturesNV nv_f{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV};
  VkPhysicalDeviceVulkan13Features f13{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES};
  VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  VkPhysicalDeviceVulkan11Features f11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
  VkPhysicalDeviceFeatures2 f2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  f2.pNext = &f11, f11.pNext = &f12, f12.pNext = &f13;
  void** tail = &f13.pNext;
  if (d.nv) *tail = &nv_f, tail = &nv_f.pNext;
  if (d.khr) *tail = &khr_f, tail = &khr_f.pNext;
  VkcCoopmat2FeaturesNV cm2_f{kStructCoopmat2FeaturesNV};
  const bool cm2 = d.khr && has_extension(d.pd, kCoopmat2ExtensionName);
  if (cm2) *tail = &cm2_f, tail = &cm2_f.pNext;
  vkGetPhysicalDeviceFeatures2(d.pd, &f2);
  d.workgroup_scope = cm2 && cm2_f.workgroup_scope && cm2_f.flexible_dimensions;
  if (!f13.maintenance4 || !f12.shaderFloat16 || !f11.storageBuffer16BitAccess || !f12.vulkanMemoryModel)
    return why = "device lacks maintenance4 / shaderFloat16 / storageBuffer16BitAccess / vulkanMemoryModel", false;
  d.nv = d.nv && nv_f.cooperativeMatrix;
  d.khr = d.khr && khr_f.cooperativeMatrix;
  d.full_subgroups = f13.computeFullSubgroups;
  // Enable only what the shaders need (the structs now hold what the device supports).
  VkPhysicalDeviceFeatures2 e2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  VkPhysicalDeviceVulkan11Features e11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
  VkPhysicalDeviceVulkan12Features e12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  VkPhysicalDeviceVulkan13Features e13{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES};
  e2.pNext = &e11, e11.pNext = &e12, e12.pNext = &e13;
  e11.storageBuffer16BitAccess = VK_TRUE;
  e12.shaderFloat16 = VK_TRUE;
  e12.vulkanMemoryModel = VK_TRUE;
  e13.maintenance4 = VK_TRUE;
  e13.subgroupSizeControl = f13.subgroupSizeControl;
  e13.computeFullSubgroups = f13.computeFullSubgroups;
  VkPhysicalDeviceCooperativeMatrixFeaturesNV env{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV};
  VkPhysicalDeviceCooperativeMatrixFeaturesKHR ekhr{kStructCoopmatFeaturesKHR, nullptr, VK_TRUE, VK_FALSE};
  env.cooperativeMatrix = VK_TRUE;
  std::vector<const char*> exts;
  tail = &e13.pNext;
  if (d.nv) exts.push_back(VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME), *tail = &env, tail = &env.pNext;
  if (d.khr) exts.push_back(VK_KHR_COOPERATIVE_MATRIX_EXTENSION_NAME), *tail = &ekhr, tail = &ekhr.pNext;
  VkcCoopmat2FeaturesNV ecm2{kStructCoopmat2FeaturesNV};
  ecm2.workgroup_scope = ecm2.flexible_dimensions = VK_TRUE;
  ecm2.tensor_addressing = cm2_f.tensor_addressing;
  if (d.workgroup_scope) exts.push_back(kCoopmat2ExtensionName), *tail = &ecm2, tail = &ecm2.pNext;
  const float priority = 1;
  VkDeviceQueueCreateInfo qci{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  qci.queueFamilyIndex = d.family, qci.queueCount = 1, qci.pQueuePriorities = &priority;
  VkDeviceCreateInfo dci{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  dci.pNext = &e2, dci.queueCreateInfoCount = 1, dci.pQueueCreateInfos = &qci;
  dci.enabledExtensionCount = static_cast<uint32_t>(exts.size()), dci.ppEnabledExtensionNames = exts.data();
  VK_CHECK(vkCreateDevice(d.pd, &dci, nullptr, &d.dev));
  vkGetDeviceQueue(d.dev, d.family, 0, &d.queue);
  VkCommandPoolCreateInfo pci{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  pci.queueFamilyIndex = d.family;
  pci.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  VK_CHECK(vkCreateCommandPool(d.dev, &pci, nullptr, &d.pool));
  return true;
}

// Prints VK_NV_cooperative_matrix2's limits and its fp16 x fp16 -> fp32 workgroup shapes.
void print_coopmat2(const Device& d) {
  VkcCoopmat2PropertiesNV p2{kStructCoopmat2PropertiesNV};
  VkPhysicalDeviceProperties2 props{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
  props.pNext = &p2;
  vkGetPhysicalDeviceProperties2(d.pd, &props);
  std::printf("cooperative_matrix2: max workgroup %u, max dimension %u, reserved shared memory %u B\n",
              p2.workgroup_scope_max_workgroup_size, p2.flexible_dimensions_max_dimension,
              p2.workgroup_scope_reserved_shared_memory);
  auto fn = reinterpret_cast<PfnCoopmatFlexiblePropertiesNV>(
      vkGetInstanceProcAddr(d.instance, "vkGetPhysicalDeviceCooperativeMatrixFlexibleDimensionsPropertiesNV"));
  if (!fn) return;
  uint32_t n = 0;
  fn(d.pd, &n, nullptr);
  std::vector<VkcCoopmatFlexiblePropertiesNV> e(n);
  for (auto& x : e) x = {kStructCoopmatFlexiblePropertiesNV};
  fn(d.pd, &n, e.data());
  for (const auto& x : e)
    if (x.a_type == 0 && x.b_type == 0 && x.c_type == 1)
      std::printf("  granularity %ux%ux%u scope %u invocations %u\n", x.m_granularity, x.n_granularity, x.k_granularity,
                  x.scope, x.workgroup_invocations);
}

// Whether the device lists a 16x16x16 fp16 x fp16 -> fp32 subgroup shape for the extension.
bool supports_16x16x16(const Device& d, vkc::codegen::Coopmat kind) {
  uint32_t n = 0;
  if (kind == vkc::codegen::Coopmat::NV) {
    auto fn = reinterpret_cast<PFN_vkGetPhysicalDeviceCooperativeMatrixPropertiesNV>(
        vkGetInstanceProcAddr(d.instance, "vkGetPhysicalDeviceCooperativeMatrixPropertiesNV"));
    if (!fn) return false;
    fn(d.pd, &n, nullptr);
    std::vector<VkCooperativeMatrixPropertiesNV> p(n, {VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_NV});
    fn(d.pd, &n, p.data());
    for (const auto& e : p)
      if (e.MSize == 16 && e.NSize == 16 && e.KSize == 16 && e.AType == VK_COMPONENT_TYPE_FLOAT16_NV &&
          e.BType == VK_COMPONENT_TYPE_FLOAT16_NV && e.CType == VK_COMPONENT_TYPE_FLOAT32_NV && e.scope == VK_SCOPE_SUBGROUP_NV)
        return true;
    return false;
  }
  auto fn = reinterpret_cast<PFN_vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR>(
      vkGetInstanceProcAddr(d.instance, "vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR"));
  if (!fn) return false;
  fn(d.pd, &n, nullptr);
  std::vector<VkCooperativeMatrixPropertiesKHR> p(n);
  for (auto& e : p) e = {kStructCoopmatPropertiesKHR};
  fn(d.pd, &n, p.data());
  for (const auto& e : p)
    if (e.MSize == 16 && e.NSize == 16 && e.KSize == 16 && e.AType == 0 && e.BType == 0 && e.CType == 1 &&
        e.ResultType == 1 && e.scope == 3 && !e.saturatingAccumulation)
      return true;
  return false;
}

constexpr uint32_t kBindings = 4;  // out, a, b, bias (shader-specs/matmul_coopmat.glsl)

// A variant's integer parameter (e.g. TILE_M), or `fallback`.
uint32_t param(const vkc::codegen::LibraryVariant& v, const std::string& name, uint32_t fallback) {
  for (const std::string& p : v.params)
    if (p.rfind(name + "=", 0) == 0) return static_cast<uint32_t>(std::stoul(p.substr(name.size() + 1)));
  return fallback;
}

struct Kernel {
  VkDescriptorSetLayout dsl = VK_NULL_HANDLE;
  VkPipelineLayout layout = VK_NULL_HANDLE;
  VkShaderModule module = VK_NULL_HANDLE;
  VkPipeline pipeline = VK_NULL_HANDLE;
  VkDescriptorPool pool = VK_NULL_HANDLE;
  VkDescriptorSet set = VK_NULL_HANDLE;
};

Kernel make_kernel(const Device& d, const vkc::codegen::LibraryVariant& v, const GpuBuffer* bufs) {
  Kernel k;
  VkDescriptorSetLayoutBinding b[kBindings];
  for (uint32_t i = 0; i < kBindings; ++i) b[i] = {i, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr};
  VkDescriptorSetLayoutCreateInfo dli{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
  dli.bindingCount = kBindings, dli.pBindings = b;
  VK_CHECK(vkCreateDescriptorSetLayout(d.dev, &dli, nullptr, &k.dsl));
  VkPushConstantRange pcr{VK_SHADER_STAGE_COMPUTE_BIT, 0, v.push_constant_bytes};
  VkPipelineLayoutCreateInfo pli{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  pli.setLayoutCount = 1, pli.pSetLayouts = &k.dsl, pli.pushConstantRangeCount = 1, pli.pPushConstantRanges = &pcr;
  VK_CHECK(vkCreatePipelineLayout(d.dev, &pli, nullptr, &k.layout));
  VkShaderModuleCreateInfo smi{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
  smi.codeSize = v.spirv.size() * 4, smi.pCode = v.spirv.data();
  VK_CHECK(vkCreateShaderModule(d.dev, &smi, nullptr, &k.module));
  VkComputePipelineCreateInfo cpi{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
  cpi.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO};
  cpi.stage.flags = d.full_subgroups ? VK_PIPELINE_SHADER_STAGE_CREATE_REQUIRE_FULL_SUBGROUPS_BIT : 0;
  cpi.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT, cpi.stage.module = k.module, cpi.stage.pName = "main";
  cpi.layout = k.layout;
  VK_CHECK(vkCreateComputePipelines(d.dev, VK_NULL_HANDLE, 1, &cpi, nullptr, &k.pipeline));
  VkDescriptorPoolSize ps{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, kBindings};
  VkDescriptorPoolCreateInfo dpi{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
  dpi.maxSets = 1, dpi.poolSizeCount = 1, dpi.pPoolSizes = &ps;
  VK_CHECK(vkCreateDescriptorPool(d.dev, &dpi, nullptr, &k.pool));
  VkDescriptorSetAllocateInfo dai{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
  dai.descriptorPool = k.pool, dai.descriptorSetCount = 1, dai.pSetLayouts = &k.dsl;
  VK_CHECK(vkAllocateDescriptorSets(d.dev, &dai, &k.set));
  VkDescriptorBufferInfo bi[kBindings];
  VkWriteDescriptorSet w[kBindings];
  for (uint32_t i = 0; i < kBindings; ++i) {
    bi[i] = {bufs[i].buffer, 0, VK_WHOLE_SIZE};
    w[i] = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
    w[i].dstSet = k.set, w[i].dstBinding = i, w[i].descriptorCount = 1;
    w[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, w[i].pBufferInfo = &bi[i];
  }
  vkUpdateDescriptorSets(d.dev, kBindings, w, 0, nullptr);
  return k;
}

void destroy_kernel(const Device& d, Kernel& k) {
  vkDestroyDescriptorPool(d.dev, k.pool, nullptr);
  vkDestroyPipeline(d.dev, k.pipeline, nullptr);
  vkDestroyShaderModule(d.dev, k.module, nullptr);
  vkDestroyPipelineLayout(d.dev, k.layout, nullptr);
  vkDestroyDescriptorSetLayout(d.dev, k.dsl, nullptr);
}

template <class Record>
void submit(const Device& d, Record&& record) {
  VkCommandBufferAllocateInfo cai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  cai.commandPool = d.pool, cai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY, cai.commandBufferCount = 1;
  VkCommandBuffer cb;
  VK_CHECK(vkAllocateCommandBuffers(d.dev, &cai, &cb));
  VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  VK_CHECK(vkBeginCommandBuffer(cb, &begin));
  record(cb);
  VK_CHECK(vkEndCommandBuffer(cb));
  VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  si.commandBufferCount = 1, si.pCommandBuffers = &cb;
  VK_CHECK(vkQueueSubmit(d.queue, 1, &si, VK_NULL_HANDLE));
  VK_CHECK(vkQueueWaitIdle(d.queue));
  vkFreeCommandBuffers(d.dev, d.pool, 1, &cb);
}

void barrier(VkCommandBuffer cb) {
  VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  mb.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_READ_BIT;
  vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, 0, 1, &mb, 0,
                       nullptr, 0, nullptr);
}

// Runs `v` on an M x N x K problem with random fp16 inputs; checks `samples` outputs (all
// when 0) against the CPU; returns false on a mismatch. `seconds` gets the time per dispatch.
bool run_problem(const Device& d, const vkc::codegen::LibraryVariant& v, uint32_t M, uint32_t N, uint32_t K,
                 uint32_t iters, size_t samples, double& seconds) {
  bool b_nk = false;  // linear variants (B_LAYOUT=nk) read W[N, K]; one template serves both
  for (const std::string& p : v.params) b_nk = b_nk || p == "B_LAYOUT=nk";
  const bool out_half = v.dtype == "f16";
  const bool acc_half = v.name.find("acc16") != std::string::npos;
  std::mt19937 rng(1234);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<uint16_t> a(size_t(M) * K), b(size_t(K) * N);
  for (auto& x : a) x = float_to_half(dist(rng));
  for (auto& x : b) x = float_to_half(dist(rng));
  // Linear variants add a bias: 16 rows of it, each padded to N rounded up to 16 (as the runtime packs it).
  const uint32_t n_pad = (N + 15) / 16 * 16;
  std::vector<float> bias(N, 0.0f), bias16(size_t(16) * n_pad, 0.0f);
  if (b_nk)
    for (uint32_t n = 0; n < N; ++n) {
      bias[n] = dist(rng);
      for (uint32_t r = 0; r < 16; ++r) bias16[size_t(r) * n_pad + n] = bias[n];
    }
  const VkDeviceSize out_bytes = VkDeviceSize(M) * N * (out_half ? 2 : 4);
  const VkBufferUsageFlags usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                                   VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  const VkDeviceSize bias_bytes = bias16.size() * 4;
  GpuBuffer bufs[kBindings] = {make_buffer(d.pd, d.dev, out_bytes, usage, false),
                               make_buffer(d.pd, d.dev, a.size() * 2, usage, false),
                               make_buffer(d.pd, d.dev, b.size() * 2, usage, false),
                               make_buffer(d.pd, d.dev, bias_bytes, usage, false)};
  GpuBuffer staging =
      make_buffer(d.pd, d.dev, std::max<VkDeviceSize>(out_bytes, (a.size() + b.size()) * 2 + bias_bytes),
                  VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT, true);
  std::memcpy(staging.mapped, a.data(), a.size() * 2);
  std::memcpy(static_cast<char*>(staging.mapped) + a.size() * 2, b.data(), b.size() * 2);
  std::memcpy(static_cast<char*>(staging.mapped) + (a.size() + b.size()) * 2, bias16.data(), bias_bytes);
  submit(d, [&](VkCommandBuffer cb) {
    VkBufferCopy ca{0, 0, a.size() * 2}, cbp{a.size() * 2, 0, b.size() * 2},
        cbias{(a.size() + b.size()) * 2, 0, bias_bytes};
    vkCmdCopyBuffer(cb, staging.buffer, bufs[1].buffer, 1, &ca);
    vkCmdCopyBuffer(cb, staging.buffer, bufs[2].buffer, 1, &cbp);
    vkCmdCopyBuffer(cb, staging.buffer, bufs[3].buffer, 1, &cbias);
  });
  Kernel k = make_kernel(d, v, bufs);
  VkQueryPoolCreateInfo qpi{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
  qpi.queryType = VK_QUERY_TYPE_TIMESTAMP, qpi.queryCount = 2;
  VkQueryPool qp;
  VK_CHECK(vkCreateQueryPool(d.dev, &qpi, nullptr, &qp));
  const int32_t mnk[4] = {int32_t(M), int32_t(N), int32_t(K), b_nk ? 1 : 0};
  // One workgroup per TILE_M x TILE_N output tile, numbered 1-D (shader-specs/matmul_coopmat.glsl).
  const uint32_t tm = param(v, "TILE_M", 128), tn = param(v, "TILE_N", 128);
  const uint32_t groups = ((M + tm - 1) / tm) * ((N + tn - 1) / tn);
  const uint32_t gx = std::min<uint32_t>(groups, 65535), gy = (groups + 65534) / 65535;
  auto dispatch = [&](VkCommandBuffer cb, uint32_t count) {
    vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, k.pipeline);
    vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, k.layout, 0, 1, &k.set, 0, nullptr);
    vkCmdPushConstants(cb, k.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof mnk, mnk);
    for (uint32_t i = 0; i < count; ++i) {
      vkCmdDispatch(cb, gx, gy, 1);
      barrier(cb);
    }
  };
  // Warm-up as long as the timed runs (the GPU's clocks ramp up), then the best of three runs.
  submit(d, [&](VkCommandBuffer cb) { dispatch(cb, iters); });
  seconds = 1e30;
  for (int rep = 0; rep < 3; ++rep) {
    submit(d, [&](VkCommandBuffer cb) {
      vkCmdResetQueryPool(cb, qp, 0, 2);
      vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, qp, 0);
      dispatch(cb, iters);
      vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, qp, 1);
      VkBufferCopy co{0, 0, out_bytes};
      vkCmdCopyBuffer(cb, bufs[0].buffer, staging.buffer, 1, &co);
    });
    uint64_t ts[2] = {0, 0};
    VK_CHECK(vkGetQueryPoolResults(d.dev, qp, 0, 2, sizeof ts, ts, 8, VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT));
    seconds = std::min(seconds, double(ts[1] - ts[0]) * d.timestamp_period * 1e-9 / iters);
  }

  std::mt19937 pick(99);
  double max_err = 0;
  const size_t total = size_t(M) * N, count = samples ? samples : total;
  for (size_t s = 0; s < count; ++s) {
    const size_t idx = samples ? pick() % total : s;
    const size_t m = idx / N, n = idx % N;
    double ref = bias[n];
    for (size_t kk = 0; kk < K; ++kk)
      ref += double(half_to_float(a[m * K + kk])) * half_to_float(b_nk ? b[n * K + kk] : b[kk * N + n]);
    const float got = out_half ? half_to_float(static_cast<const uint16_t*>(staging.mapped)[idx])
                               : static_cast<const float*>(staging.mapped)[idx];
    // fp16 accumulators (`--spv` modules tagged acc16) round the running sum every 16 of K.
    const double err = std::fabs(got - ref) / (acc_half    ? 2e-3 * std::fabs(ref) + 0.5
                                               : out_half ? 1e-3 * std::fabs(ref) + 2e-2
                                                          : 1e-4 * std::fabs(ref) + 1e-3);
    max_err = std::max(max_err, err);
  }
  vkDestroyQueryPool(d.dev, qp, nullptr);
  destroy_kernel(d, k);
  for (auto& b2 : bufs) destroy_buffer(d.dev, b2);
  destroy_buffer(d.dev, staging);
  return max_err <= 1.0;  // error relative to the tolerance
}

bool run_all(const Device& d, const std::vector<vkc::codegen::LibraryVariant>& variants, uint32_t size, uint32_t iters) {
  bool ok = true;
  std::printf("%-26s %-10s %-12s %s\n", "variant", "small", "size^3", "TFLOP/s");
  for (const auto& v : variants) {
    if (v.coopmat == vkc::codegen::Coopmat::None) continue;
    bool workgroup = false;  // --spv modules (VK_NV_cooperative_matrix2)
    for (const std::string& p : v.params) workgroup = workgroup || p == "SCOPE=workgroup";
    const bool enabled = workgroup ? v.coopmat == vkc::codegen::Coopmat::KHR && d.workgroup_scope
                                   : (v.coopmat == vkc::codegen::Coopmat::NV ? d.nv : d.khr);
    if (!enabled || !supports_16x16x16(d, v.coopmat)) {
      std::printf("%-26s skipped: the device lacks this extension or its 16x16x16 fp16/fp32 shape\n", v.name.c_str());
      continue;
    }
    double t_small = 0, t_big = 0;
    // Whole tiles, then edges in M, N (a multiple of 8, not 16) and K (a multiple of 8, not 32).
    const bool small_ok = run_problem(d, v, 80, 48, 64, 1, 0, t_small) && run_problem(d, v, 100, 56, 72, 1, 0, t_small) &&
                          run_problem(d, v, 300, 264, 520, 1, 0, t_small);
    bool big_ok = true;
    std::string big = "-";
    {
      big_ok = run_problem(d, v, size, size, size, iters, 64, t_big);
      char buf[64];
      std::snprintf(buf, sizeof buf, "%.3f ms", t_big * 1e3);
      big = buf;
    }
    const double tflops = t_big > 0 ? 2.0 * size * size * size / t_big / 1e12 : 0;
    std::printf("%-26s %-10s %-12s %s%s\n", v.name.c_str(), small_ok ? "ok" : "MISMATCH", big.c_str(),
                tflops > 0 ? std::to_string(tflops).c_str() : "-", big_ok ? "" : "  (large: MISMATCH)");
    ok = ok && small_ok && big_ok;
  }
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: coopmat_check BUNDLE.vksl [--size N] [--iters I] [--require] [--spv FILE]...\n");
    return 2;
  }
  uint32_t size = 4096, iters = 10;
  bool require = false;
  std::vector<std::string> spv_files;
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--spv" && i + 1 < argc) {
      spv_files.push_back(argv[++i]);
      continue;
    }
    if (a == "--size" && i + 1 < argc) size = static_cast<uint32_t>(std::stoul(argv[++i]));
    else if (a == "--iters" && i + 1 < argc) iters = static_cast<uint32_t>(std::stoul(argv[++i]));
    else if (a == "--require") require = true;
  }
  try {
    const auto lib = vkc::codegen::ShaderLibrary::load(argv[1]);
    Device d;
    std::string why;
    if (!open_device(d, why)) {
      std::printf("coopmat_check: skipped: %s\n", why.c_str());
      return require ? 1 : 0;
    }
    std::printf("device: %s (VK_NV_cooperative_matrix %s, VK_KHR_cooperative_matrix %s)\n", d.name.c_str(),
                d.nv ? "yes" : "no", d.khr ? "yes" : "no");
    if (d.workgroup_scope) print_coopmat2(d);
    std::vector<vkc::codegen::LibraryVariant> variants(lib.variants().begin(), lib.variants().end());
    std::list<std::vector<uint32_t>> extra_words;
    // Extra KHR modules named <t|s>_<TM>x<TN>_k<BK>_i<invocations>_kn<0|1>[_tag].spv: t_ for
    // workgroup scope (bench/gpu/coopmat2_tensor.comp, needs VK_NV_cooperative_matrix2), s_ for
    // subgroup scope (bench/gpu/coopmat_exp/). They handle the edges like the library's.
    for (const std::string& f : spv_files) {
      vkc::codegen::LibraryVariant v;
      const std::string base = f.substr(f.find_last_of('/') + 1);
      unsigned tm = 0, tn = 0, bk = 0, inv = 0, kn = 0;
      const bool subgroup = base.rfind("s_", 0) == 0;
      if ((!subgroup && base.rfind("t_", 0) != 0) ||
          std::sscanf(base.c_str() + 2, "%ux%u_k%u_i%u_kn%u", &tm, &tn, &bk, &inv, &kn) != 5)
        throw std::runtime_error("--spv: cannot read the tile from " + base);
      v.name = base.substr(0, base.size() - 4);
      v.params = {"TILE_M=" + std::to_string(tm), "TILE_N=" + std::to_string(tn), "K_STEP=" + std::to_string(bk),
                  kn ? "B_LAYOUT=kn" : "B_LAYOUT=nk"};
      if (!subgroup) v.params.push_back("SCOPE=workgroup");
      v.dtype = "f32";
      v.coopmat = vkc::codegen::Coopmat::KHR;
      v.push_constant_bytes = 16;
      FILE* fp = std::fopen(f.c_str(), "rb");
      if (!fp) throw std::runtime_error("--spv: cannot open " + f);
      auto& words = extra_words.emplace_back();
      uint32_t word;
      while (std::fread(&word, 4, 1, fp) == 1) words.push_back(word);
      std::fclose(fp);
      v.spirv = words;
      variants.push_back(std::move(v));
    }
    return run_all(d, variants, size, iters) ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "coopmat_check: error: %s\n", e.what());
    return 1;
  }
}
