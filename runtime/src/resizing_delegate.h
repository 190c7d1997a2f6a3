// A delegate with bounded dynamic dims (serializer/dynamic_dims.h) run at the sizes its inputs
// have: one backend instance per distinct size, made from the payload with every listed dim
// evaluated at that size (at load for the largest and the smallest sizes, else on first use), and
// kept (at most kMaxInstances, the least recently used replaced). The instances share constants and state (KV caches) through the backend's
// SharedDelegateState, so a prefill at one size and decode steps at another extend one cache.
#pragma once

#include <memory>

#include "vkc/runtime/backend.h"

namespace vkc::runtime {

inline constexpr size_t kMaxInstances = 8;

/// Whether `d` carries a table of dynamic dims.
bool has_dynamic_dims(const serializer::BackendDelegate& d);

/// `d` and `named` outlive the instance; so does `backend`. Throws RuntimeError on a malformed table.
std::unique_ptr<DelegateInstance> make_resizing_delegate(Backend& backend, const serializer::BackendDelegate& d,
                                                         const NamedDataMap& named);

}  // namespace vkc::runtime
