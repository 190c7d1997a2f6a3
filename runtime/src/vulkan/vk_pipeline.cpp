#include "vk_pipeline.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <optional>
#include <unordered_set>

#include "vk_chain.h"
#include "vkc/runtime/backend.h"

namespace vkc::runtime::vk {

Push::Push(const codegen::LibraryVariant& v) : v_(v), bytes_(v.push_constant_bytes, 0) {}

void Push::put(const char* name, const char* type, const void* data, size_t size) {
  for (const auto& m : v_.push_constants) {
    if (m.name != name) continue;
    const bool ok = m.type == type || (std::strcmp(type, "ivec4") == 0 && (m.type == "ivec2" || m.type == "ivec3"));
    if (!ok) throw RuntimeError(fmt::format("shader {}: push constant {} is {}, set as {}", v_.name, name, m.type, type));
    const size_t n = m.type == "ivec2" ? 8 : m.type == "ivec3" ? 12 : size;
    if (m.offset + n > bytes_.size()) throw RuntimeError(fmt::format("shader {}: push constant {} overflows", v_.name, name));
    std::memcpy(bytes_.data() + m.offset, data, n);
    return;
  }
  throw RuntimeError(fmt::format("shader {} has no push constant {}", v_.name, name));
}
Push& Push::i(const char* name, int32_t x) { return put(name, "int", &x, 4), *this; }
Push& Push::f(const char* name, float x) { return put(name, "float", &x, 4), *this; }
Push& Push::iv(const char* name, ivec4 x) { return put(name, "ivec4", x.data(), 16), *this; }
Push& Push::fv2(const char* name, float x, float y) {
  const float v[2] = {x, y};
  return put(name, "vec2", v, 8), *this;
}

namespace {
VkDescriptorType descriptor_type(codegen::DescriptorType t) {
  switch (t) {
    case codegen::DescriptorType::StorageBuffer: return VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    case codegen::DescriptorType::StorageImage: return VK_DESCRIPTOR_TYPE_STORAGE_IMAGE;
    case codegen::DescriptorType::SampledImage: return VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER;
    case codegen::DescriptorType::UniformBuffer: return VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER;
  }
  return VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
}
}  // namespace

PipelineCache::~PipelineCache() {
  for (auto& [name, p] : pipelines_) {
    vkDestroyPipeline(ctx_->device(), p.pipeline, nullptr);
    vkDestroyPipelineLayout(ctx_->device(), p.layout, nullptr);
    vkDestroyDescriptorSetLayout(ctx_->device(), p.set_layout, nullptr);
  }
}

const Pipeline& PipelineCache::get(const codegen::LibraryVariant& v) {
  // Keyed by name and code: a payload's embedded SPIR-V may differ from the library's.
  const std::string key = fmt::format(
      "{}#{:x}", v.name,
      std::hash<std::string_view>{}(std::string_view(reinterpret_cast<const char*>(v.spirv.data()), v.spirv.size() * 4)));
  if (auto it = pipelines_.find(key); it != pipelines_.end()) return it->second;
  VkDevice dev = ctx_->device();
  Pipeline p;
  std::vector<VkDescriptorSetLayoutBinding> bs;
  for (const auto& b : v.bindings)
    bs.push_back({b.binding, descriptor_type(b.type), 1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr});
  auto dci = make_info<VkDescriptorSetLayoutCreateInfo>(VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO);
  dci.bindingCount = static_cast<uint32_t>(bs.size());
  dci.pBindings = bs.data();
  check(vkCreateDescriptorSetLayout(dev, &dci, nullptr, &p.set_layout), "vkCreateDescriptorSetLayout");
  VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, v.push_constant_bytes};
  auto lci = make_info<VkPipelineLayoutCreateInfo>(VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO);
  lci.setLayoutCount = 1;
  lci.pSetLayouts = &p.set_layout;
  lci.pushConstantRangeCount = v.push_constant_bytes ? 1 : 0;
  lci.pPushConstantRanges = &range;
  check(vkCreatePipelineLayout(dev, &lci, nullptr, &p.layout), "vkCreatePipelineLayout");
  auto sci = make_info<VkShaderModuleCreateInfo>(VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO);
  sci.codeSize = v.spirv.size() * 4;
  sci.pCode = v.spirv.data();
  VkShaderModule module = VK_NULL_HANDLE;
  check(vkCreateShaderModule(dev, &sci, nullptr, &module), "vkCreateShaderModule");
  auto cci = make_info<VkComputePipelineCreateInfo>(VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO);
  cci.stage = make_info<VkPipelineShaderStageCreateInfo>(VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO);
  cci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  cci.stage.module = module;
  cci.stage.pName = "main";
  cci.layout = p.layout;
  if (ctx_->pipeline_stats()) cci.flags |= VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR;
  const VkResult r = vkCreateComputePipelines(dev, VK_NULL_HANDLE, 1, &cci, nullptr, &p.pipeline);
  vkDestroyShaderModule(dev, module, nullptr);
  check(r, "vkCreateComputePipelines");
  if (ctx_->pipeline_stats()) print_pipeline_stats(dev, p.pipeline, v.name);
  return pipelines_.emplace(key, p).first->second;
}

namespace {

std::string stat_value(const VkPipelineExecutableStatisticKHR& s) {
  switch (s.format) {
    case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_BOOL32_KHR: return s.value.b32 ? "true" : "false";
    case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_INT64_KHR: return std::to_string(s.value.i64);
    case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_UINT64_KHR: return std::to_string(s.value.u64);
    case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_FLOAT64_KHR: return fmt::format("{:g}", s.value.f64);
    default: return "?";
  }
}

// Vulkan's two-call enumeration of structs of type T (sType `type`): `call(count, data)` asked for
// the count (data null), then filled; nullopt when either call fails.
template <typename T, typename Call>
std::optional<std::vector<T>> enumerate_structs(VkStructureType type, Call call) {
  uint32_t n = 0;
  if (call(&n, nullptr) != VK_SUCCESS) return std::nullopt;
  std::vector<T> items(n, make_info<T>(type));
  if (call(&n, items.data()) != VK_SUCCESS) return std::nullopt;
  items.resize(n);
  return items;
}

}  // namespace

void PipelineCache::print_pipeline_stats(VkDevice dev, VkPipeline pipeline, const std::string& name) const {
  const auto props = reinterpret_cast<PFN_vkGetPipelineExecutablePropertiesKHR>(
      vkGetDeviceProcAddr(dev, "vkGetPipelineExecutablePropertiesKHR"));
  const auto stats = reinterpret_cast<PFN_vkGetPipelineExecutableStatisticsKHR>(
      vkGetDeviceProcAddr(dev, "vkGetPipelineExecutableStatisticsKHR"));
  if (!props || !stats) return;
  auto info = make_info<VkPipelineInfoKHR>(VK_STRUCTURE_TYPE_PIPELINE_INFO_KHR);
  info.pipeline = pipeline;
  const auto execs = enumerate_structs<VkPipelineExecutablePropertiesKHR>(
      VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_PROPERTIES_KHR,
      [&](uint32_t* n, VkPipelineExecutablePropertiesKHR* out) { return props(dev, &info, n, out); });
  if (!execs) return;
  for (uint32_t i = 0; i < execs->size(); ++i) {
    auto ei = make_info<VkPipelineExecutableInfoKHR>(VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INFO_KHR);
    ei.pipeline = pipeline;
    ei.executableIndex = i;
    const auto s = enumerate_structs<VkPipelineExecutableStatisticKHR>(
        VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_STATISTIC_KHR,
        [&](uint32_t* n, VkPipelineExecutableStatisticKHR* out) { return stats(dev, &ei, n, out); });
    if (!s) continue;
    std::string line = fmt::format("vulkan pipeline {} (subgroup {}):", name, (*execs)[i].subgroupSize);
    for (const VkPipelineExecutableStatisticKHR& st : *s) line += fmt::format(" {}={}", st.name, stat_value(st));
    std::fprintf(stderr, "%s\n", line.c_str());
  }
}

Recording::Recording(std::shared_ptr<Context> ctx, PipelineCache& cache, const std::vector<Dispatch>& ds,
                     const std::vector<VkImage>& images, Profile profile, bool full_barriers,
                     const std::vector<BufferCopy>& copies_after)
    : ctx_(std::move(ctx)), whole_run_(profile == Profile::Run), dispatches_(ds.size()) {
  VkDevice dev = ctx_->device();
  uint32_t buffers = 0, imgs = 0;
  for (const auto& d : ds)
    for (const auto& b : d.variant->bindings) (b.type == codegen::DescriptorType::StorageImage ? imgs : buffers)++;
  std::vector<VkDescriptorPoolSize> sizes;
  if (buffers) sizes.push_back({VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, buffers});
  if (imgs) sizes.push_back({VK_DESCRIPTOR_TYPE_STORAGE_IMAGE, imgs});
  if (!ds.empty()) {
    auto pci = make_info<VkDescriptorPoolCreateInfo>(VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO);
    pci.maxSets = static_cast<uint32_t>(ds.size());
    pci.poolSizeCount = static_cast<uint32_t>(sizes.size());
    pci.pPoolSizes = sizes.data();
    check(vkCreateDescriptorPool(dev, &pci, nullptr, &pool_), "vkCreateDescriptorPool");
  }
  cb_ = ctx_->begin_commands();
  if (profile != Profile::Off && !ds.empty() && ctx_->properties().limits.timestampPeriod > 0) {
    auto qci = make_info<VkQueryPoolCreateInfo>(VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO);
    qci.queryType = VK_QUERY_TYPE_TIMESTAMP;
    qci.queryCount = whole_run_ ? 2u : static_cast<uint32_t>(ds.size() + 1);
    check(vkCreateQueryPool(dev, &qci, nullptr, &queries_), "vkCreateQueryPool");
    vkCmdResetQueryPool(cb_, queries_, 0, qci.queryCount);
    if (whole_run_) where_.push_back("the whole run");
    else
      for (const auto& d : ds) where_.push_back(d.variant->name + " " + d.where);
    gpu_ns_.assign(where_.size(), 0.0);
  }
  std::vector<VkImageMemoryBarrier> to_general;
  for (VkImage im : images) {
    auto b = make_info<VkImageMemoryBarrier>(VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER);
    b.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;
    b.oldLayout = VK_IMAGE_LAYOUT_UNDEFINED;
    b.newLayout = VK_IMAGE_LAYOUT_GENERAL;
    b.srcQueueFamilyIndex = b.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
    b.image = im;
    b.subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
    to_general.push_back(b);
  }
  if (!to_general.empty())
    vkCmdPipelineBarrier(cb_, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 0, nullptr, 0,
                         nullptr, static_cast<uint32_t>(to_general.size()), to_general.data());
  auto mb = make_info<VkMemoryBarrier>(VK_STRUCTURE_TYPE_MEMORY_BARRIER);
  mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_HOST_WRITE_BIT;
  mb.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;
  vkCmdPipelineBarrier(cb_, VK_PIPELINE_STAGE_HOST_BIT | VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                       VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1, &mb, 0, nullptr, 0, nullptr);
  mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
  if (queries_) vkCmdWriteTimestamp(cb_, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, queries_, 0);
  uint32_t query = 1;
  const bool every = full_barriers || (queries_ != VK_NULL_HANDLE && !whole_run_);
  const SyncPlan plan = plan_syncs(ds, every, chains_from_env(*ctx_), cache);
  barriers_ = plan.barriers;
  chained_ = plan.chained;
  if (queries_ && !whole_run_)  // (profiles name the twins that ran)
    for (size_t i = 0; i < ds.size(); ++i)
      if (plan.twin[i]) where_[i].insert(ds[i].variant->name.size(), "_chain");
  if (std::find(plan.twin.begin(), plan.twin.end(), true) != plan.twin.end()) {
    // The chains' counters, zero at the start of each run; the flag (counter 0) read back at the end.
    chain_counters_ = ctx_->make_buffer(4 * plan.counters, Context::Mem::Device);
    chain_flag_ = ctx_->make_buffer(4, Context::Mem::Readback);
    std::memset(chain_flag_.mapped, 0, 4);
    vkCmdFillBuffer(cb_, chain_counters_.buffer, 0, VK_WHOLE_SIZE, 0);
    auto fb = make_info<VkMemoryBarrier>(VK_STRUCTURE_TYPE_MEMORY_BARRIER);
    fb.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
    fb.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;
    vkCmdPipelineBarrier(cb_, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1, &fb, 0,
                         nullptr, 0, nullptr);
  }
  for (size_t i = 0; i < ds.size(); ++i) {
    const Dispatch& d = ds[i];
    // (a dispatch that waits on a count or raises one runs its variant's _chain twin)
    const bool chained = plan.twin[i];
    const codegen::LibraryVariant& v = chained ? *cache.chain_twin(*d.variant) : *d.variant;
    if (plan.barrier_before[i])
      vkCmdPipelineBarrier(cb_, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1, &mb, 0,
                           nullptr, 0, nullptr);
    const Pipeline& p = cache.get(v);
    auto ai = make_info<VkDescriptorSetAllocateInfo>(VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO);
    ai.descriptorPool = pool_;
    ai.descriptorSetCount = 1;
    ai.pSetLayouts = &p.set_layout;
    VkDescriptorSet set = VK_NULL_HANDLE;
    check(vkAllocateDescriptorSets(dev, &ai, &set), "vkAllocateDescriptorSets");
    if (d.resources.size() != d.variant->bindings.size())
      throw RuntimeError(fmt::format("{}: shader {} has {} bindings, {} given", d.where, d.variant->name,
                                     d.variant->bindings.size(), d.resources.size()));
    std::vector<Resource> resources = d.resources;
    std::vector<uint8_t> push = d.push;
    if (chained) {
      resources.push_back({chain_counters_.buffer, VK_NULL_HANDLE});
      push.resize(v.push_constant_bytes, 0);
      const auto m = std::find_if(v.push_constants.begin(), v.push_constants.end(),
                                  [](const auto& c) { return c.name == "chain"; });
      if (m == v.push_constants.end() || m->offset + sizeof(ivec4) > push.size())
        throw RuntimeError(fmt::format("{}: shader {} has no push constant chain", d.where, v.name));
      std::memcpy(push.data() + m->offset, plan.chain[i].data(), sizeof(ivec4));
    }
    std::vector<VkDescriptorBufferInfo> bi(v.bindings.size());
    std::vector<VkDescriptorImageInfo> ii(v.bindings.size());
    std::vector<VkWriteDescriptorSet> writes;
    for (size_t k = 0; k < v.bindings.size(); ++k) {
      const bool image = v.bindings[k].type == codegen::DescriptorType::StorageImage;
      if (image ? !resources[k].view : !resources[k].buffer)
        throw RuntimeError(fmt::format("{}: shader {} binding {} ({}) needs a {}", d.where, v.name, k,
                                       v.bindings[k].name, image ? "texture" : "buffer"));
      auto w = make_info<VkWriteDescriptorSet>(VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET);
      w.dstSet = set;
      w.dstBinding = v.bindings[k].binding;
      w.descriptorCount = 1;
      w.descriptorType = image ? VK_DESCRIPTOR_TYPE_STORAGE_IMAGE : VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
      if (image) {
        ii[k] = {VK_NULL_HANDLE, resources[k].view, VK_IMAGE_LAYOUT_GENERAL};
        w.pImageInfo = &ii[k];
      } else {
        bi[k] = {resources[k].buffer, 0, VK_WHOLE_SIZE};
        w.pBufferInfo = &bi[k];
      }
      writes.push_back(w);
    }
    vkUpdateDescriptorSets(dev, static_cast<uint32_t>(writes.size()), writes.data(), 0, nullptr);
    vkCmdBindPipeline(cb_, VK_PIPELINE_BIND_POINT_COMPUTE, p.pipeline);
    vkCmdBindDescriptorSets(cb_, VK_PIPELINE_BIND_POINT_COMPUTE, p.layout, 0, 1, &set, 0, nullptr);
    if (!push.empty())
      vkCmdPushConstants(cb_, p.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, static_cast<uint32_t>(push.size()), push.data());
    // 1-D dispatch: (min(groups, 65535), ceil(groups / 65535), 1) workgroups (vkc_common.glslh).
    const int64_t local = std::max<uint32_t>(1, v.local_size[0]) * std::max<uint32_t>(1, v.local_size[1]) *
                          std::max<uint32_t>(1, v.local_size[2]);
    const int64_t groups = std::max<int64_t>(1, (d.items + local - 1) / local);
    const uint32_t gx = static_cast<uint32_t>(std::min<int64_t>(groups, 65535));
    const uint32_t gy = static_cast<uint32_t>((groups + 65534) / 65535);
    if (gy > ctx_->properties().limits.maxComputeWorkGroupCount[1])
      throw RuntimeError(fmt::format("{}: {} invocations are too many for one dispatch", d.where, d.items));
    vkCmdDispatch(cb_, gx, gy, 1);
    if (every) {
      vkCmdPipelineBarrier(cb_, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1, &mb,
                           0, nullptr, 0, nullptr);
      ++barriers_;
    }
    if (queries_ && !whole_run_) vkCmdWriteTimestamp(cb_, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, queries_, query++);
  }
  // (and the chains' flag, counter 0, into the host's copy)
  std::vector<BufferCopy> copies = copies_after;
  if (chain_flag_.buffer) copies.push_back({chain_counters_.buffer, chain_flag_.buffer, 4});
  if (!copies.empty()) {
    mb.dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT;
    vkCmdPipelineBarrier(cb_, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &mb, 0,
                         nullptr, 0, nullptr);
    for (const BufferCopy& c : copies) {
      const VkBufferCopy region{0, 0, c.bytes};
      vkCmdCopyBuffer(cb_, c.src, c.dst, 1, &region);
    }
    auto tb = make_info<VkMemoryBarrier>(VK_STRUCTURE_TYPE_MEMORY_BARRIER);
    tb.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
    tb.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
    vkCmdPipelineBarrier(cb_, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &tb, 0, nullptr, 0,
                         nullptr);
  }
  if (queries_ && whole_run_) vkCmdWriteTimestamp(cb_, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, queries_, 1);
  mb.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
  vkCmdPipelineBarrier(cb_, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &mb, 0, nullptr, 0,
                       nullptr);
  check(vkEndCommandBuffer(cb_), "vkEndCommandBuffer");
}

const codegen::LibraryVariant* PipelineCache::chain_twin(const codegen::LibraryVariant& v) const {
  return library_ ? library_->by_name(v.name + "_chain") : nullptr;
}

void Recording::check_chains() const {
  if (chain_flag_.mapped && *static_cast<const uint32_t*>(chain_flag_.mapped) != 0)
    throw RuntimeError(
        "vulkan: a chained dispatch waited past its bound for the one before it (this device may not launch "
        "dispatches in order); VKC_VULKAN_CHAIN=0 records barriers instead");
}

void Recording::run() {
  const auto t0 = std::chrono::steady_clock::now();
  ctx_->run(cb_);
  check_chains();
  if (!queries_) return;
  wall_ns_ += std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
  std::vector<uint64_t> ticks(gpu_ns_.size() + 1);
  check(vkGetQueryPoolResults(ctx_->device(), queries_, 0, static_cast<uint32_t>(ticks.size()),
                              ticks.size() * sizeof(uint64_t), ticks.data(), sizeof(uint64_t),
                              VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT),
        "vkGetQueryPoolResults");
  const double period = ctx_->properties().limits.timestampPeriod;
  for (size_t i = 0; i < gpu_ns_.size(); ++i) gpu_ns_[i] += static_cast<double>(ticks[i + 1] - ticks[i]) * period;
  ++runs_;
}

double Recording::submitted_gpu_ns() const {
  if (!queries_ || !whole_run_) return 0;
  uint64_t ticks[2] = {0, 0};
  check(vkGetQueryPoolResults(ctx_->device(), queries_, 0, 2, sizeof(ticks), ticks, sizeof(uint64_t),
                              VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT),
        "vkGetQueryPoolResults");
  return static_cast<double>(ticks[1] - ticks[0]) * ctx_->properties().limits.timestampPeriod;
}

// The mean GPU time per run of each dispatch (in dispatch order), then the total.
void Recording::print_profile() const {
  if (!queries_ || runs_ == 0) return;
  double total = 0;
  for (double ns : gpu_ns_) total += ns;
  if (whole_run_) {
    fmt::print(stderr,
               "vulkan run profile: {} dispatch(es), {} barrier(s), {} chained; {:.3f} ms GPU time, {:.3f} ms host wall (submit to "
               "fence), {:.3f} ms execute() per run (mean of {} run(s))\n",
               dispatches_, barriers_, chained_, total / runs_ / 1e6, wall_ns_ / runs_ / 1e6, execute_ns_ / runs_ / 1e6, runs_);
    return;
  }
  fmt::print(stderr, "vulkan profile: {} dispatch(es), {:.3f} ms GPU time per run (mean of {} run(s))\n",
             gpu_ns_.size(), total / runs_ / 1e6, runs_);
  for (size_t i = 0; i < gpu_ns_.size(); ++i)
    fmt::print(stderr, "  {:9.1f} us  {:5.1f}%  {}\n", gpu_ns_[i] / runs_ / 1e3, total > 0 ? 100.0 * gpu_ns_[i] / total : 0.0,
               where_[i]);
  // The same time summed per shader (its name, where_'s first word), the largest first.
  std::map<std::string, std::pair<double, int>> per_shader;
  for (size_t i = 0; i < gpu_ns_.size(); ++i) {
    auto& [ns, count] = per_shader[where_[i].substr(0, where_[i].find(' '))];
    ns += gpu_ns_[i];
    ++count;
  }
  std::vector<std::pair<std::string, std::pair<double, int>>> sorted(per_shader.begin(), per_shader.end());
  std::stable_sort(sorted.begin(), sorted.end(), [](const auto& x, const auto& y) { return x.second.first > y.second.first; });
  fmt::print(stderr, "vulkan profile by shader (per run):\n");
  for (const auto& [name, v] : sorted)
    fmt::print(stderr, "  by shader {:9.1f} us  {:5.1f}%  {:4}x  {}\n", v.first / runs_ / 1e3,
               total > 0 ? 100.0 * v.first / total : 0.0, v.second, name);
}

Recording::~Recording() {
  print_profile();
  if (queries_) vkDestroyQueryPool(ctx_->device(), queries_, nullptr);
  if (cb_) ctx_->free_commands(cb_);
  if (pool_) vkDestroyDescriptorPool(ctx_->device(), pool_, nullptr);
}

}  // namespace vkc::runtime::vk
