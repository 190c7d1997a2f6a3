#include "vk_chain.h"

#include "vkc/runtime/vulkan.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <string_view>
#include <unordered_set>

namespace vkc::runtime {
namespace {
std::atomic<uint64_t> g_recorded_chains{0};
std::atomic<uint64_t> g_recorded_twins{0};
}
uint64_t vulkan_recorded_chains() { return g_recorded_chains.load(); }
uint64_t vulkan_recorded_twins() { return g_recorded_twins.load(); }
}  // namespace vkc::runtime

namespace vkc::runtime::vk {

int64_t workgroups(const Dispatch& d) {
  const auto& s = d.variant->local_size;
  const int64_t local = int64_t{std::max<uint32_t>(1, s[0])} * std::max<uint32_t>(1, s[1]) * std::max<uint32_t>(1, s[2]);
  const int64_t groups = std::max<int64_t>(1, (d.items + local - 1) / local);
  return std::min<int64_t>(groups, 65535) * ((groups + 65534) / 65535);
}

namespace {
bool twin_allowed(const codegen::LibraryVariant& v, const Chains& chains, const PipelineCache& cache) {
  const codegen::LibraryVariant* twin = chains.mode == Chains::Off ? nullptr : cache.chain_twin(v);
  if (!twin) return false;
  switch (chains.mode) {
    case Chains::All: return true;
    case Chains::Named:
      return std::any_of(chains.names.begin(), chains.names.end(),
                         [&](const std::string& n) { return v.name.find(n) != std::string::npos; });
    default:
      return std::find(twin->params.begin(), twin->params.end(), "VKC_CHAIN_BY_DEFAULT=1") != twin->params.end();
  }
}
}  // namespace

SyncPlan plan_syncs(const std::vector<Dispatch>& ds, bool every, const Chains& chains, const PipelineCache& cache) {
  SyncPlan plan;
  plan.barrier_before.assign(ds.size(), false);
  plan.chain.assign(ds.size(), ivec4{0, 0, 0, 0});
  plan.twin.assign(ds.size(), false);
  plan.counters = 1;  // counter 0: the flag of a wait past its bound
  const auto count_twins = [&] { g_recorded_twins += std::count(plan.twin.begin(), plan.twin.end(), true); };
  const char* twins = std::getenv("VKC_VULKAN_CHAIN_TWINS");
  if (twins && std::string_view(twins) == "1")
    for (size_t i = 0; i < ds.size(); ++i) plan.twin[i] = twin_allowed(*ds[i].variant, chains, cache);
  if (every) {  // (the recording puts a barrier after each dispatch)
    count_twins();
    return plan;
  }
  // (tests: every wait asks for one workgroup more than there are, so it polls to its bound)
  const char* unreachable = std::getenv("VKC_VULKAN_CHAIN_UNREACHABLE");
  const int32_t extra = unreachable && std::string_view(unreachable) == "1" ? 1 : 0;
  std::unordered_set<uint64_t> written, read;  // memory touched since the last barrier
  bool synced_before_last = true;              // the dispatch before had a sync point right before it
  for (size_t i = 0; i < ds.size(); ++i) {
    const Dispatch& d = ds[i];
    const codegen::LibraryVariant& v = *d.variant;
    const size_t given = v.bindings.size();
    bool hazard = d.memory.size() != given;  // unknown memory: be safe
    for (size_t k = 0; k < given && k < d.memory.size(); ++k) {
      const bool writes = v.bindings[k].access != "read";
      hazard = hazard || written.count(d.memory[k]) || (writes && read.count(d.memory[k]));
    }
    const bool chained = hazard && i > 0 && synced_before_last && twin_allowed(v, chains, cache) &&
                         twin_allowed(*ds[i - 1].variant, chains, cache);
    if (chained) {
      // (the hazards stay recorded: a later dispatch that needs this one's inputs syncs too)
      const int32_t counter = static_cast<int32_t>(plan.counters++);
      plan.chain[i - 1][2] = counter + 1;
      plan.chain[i] = {counter + 1, static_cast<int32_t>(workgroups(ds[i - 1])) + extra, 0, 0};
      plan.twin[i - 1] = plan.twin[i] = true;
      ++plan.chained;
      ++g_recorded_chains;
    } else if (hazard) {
      plan.barrier_before[i] = true;
      ++plan.barriers;
      written.clear();
      read.clear();
    }
    synced_before_last = hazard || i == 0;
    for (size_t k = 0; k < given && k < d.memory.size(); ++k)
      (v.bindings[k].access == "read" ? read : written).insert(d.memory[k]);
  }
  count_twins();
  return plan;
}

Chains chains_from_env(const Context& ctx) {
  const char* env = std::getenv("VKC_VULKAN_CHAIN");  // (read at each record: the tests switch it)
  const std::string_view e = env ? env : "";
  if (e == "1") return {Chains::All, {}};
  if (e == "0") return {Chains::Off, {}};
  if (!e.empty()) {
    Chains named{Chains::Named, {}};
    for (size_t at = 0; at <= e.size();) {
      const size_t comma = std::min(e.find(',', at), e.size());
      if (comma > at) named.names.emplace_back(e.substr(at, comma - at));
      at = comma + 1;
    }
    return named;
  }
  constexpr uint32_t kNvidia = 0x10de;
  return {ctx.properties().vendorID == kNvidia ? Chains::ByDefault : Chains::Off, {}};
}

}  // namespace vkc::runtime::vk
