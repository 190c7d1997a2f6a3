// Where a recorded list of dispatches synchronizes: a pipeline barrier, or a chained wait
// (docs/runtime.md, "Chained dispatches"). A dispatch that touches memory an earlier one wrote (or
// writes memory one read) since the last barrier needs one; where it and the dispatch before it
// are both chain-capable (their shaders' last binding is `chain`, vkc_chain.glslh) and that one
// alone ran since the last sync point, the barrier is left out: the dispatch before counts its
// workgroups done in a counter and this one's workgroups wait for the count (both run their
// variants' `_chain` twins). Chains are strict (one dispatch between sync points), so a count
// reached means every dispatch before is done.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "vk_pipeline.h"

namespace vkc::runtime::vk {

struct SyncPlan {
  std::vector<bool> barrier_before;  // per dispatch: a pipeline barrier right before it
  std::vector<ivec4> chain;          // per dispatch: the push constant `chain` (vkc_chain.glslh)
  std::vector<bool> twin;            // per dispatch: runs its variant's _chain twin
  uint32_t counters = 0;             // the counters the chains use, the flag (counter 0) included
  size_t barriers = 0, chained = 0;
};

/// Workgroups of one dispatch (vkc_common.glslh's 1-D numbering, (x, y) = (min(groups, 65535), ...)).
int64_t workgroups(const Dispatch& d);
/// Which twins chain: none, those of specs with `chain_by_default` (VKC_CHAIN_BY_DEFAULT), all, or
/// those of variants whose name contains one of `names`.
struct Chains {
  enum Mode { Off, ByDefault, All, Named } mode = Off;
  std::vector<std::string> names;
};
/// `every`: a barrier after each dispatch (profiles) and no chains. Otherwise chains where allowed
/// between dispatches whose variants have twins in `cache` that `chains` selects. A dispatch runs
/// its twin where it chains, and (VKC_VULKAN_CHAIN_TWINS=1, to time the twins apart from their
/// waits, as in profiles) wherever `chains` selects its twin: unchained, it neither waits nor counts.
SyncPlan plan_syncs(const std::vector<Dispatch>& ds, bool every, const Chains& chains, const PipelineCache& cache);
/// VKC_VULKAN_CHAIN=1: all twins chain; 0: none; a comma-separated list of names: the twins of the
/// variants whose names contain one (both ends of a chain must match); unset: the twins chained by
/// default, on devices that launch a dispatch's workgroups in order after the ones before (NVIDIA),
/// none elsewhere.
Chains chains_from_env(const Context& ctx);

}  // namespace vkc::runtime::vk
