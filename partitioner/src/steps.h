// The steps partition_graph runs, one file each.
#pragma once

#include <optional>
#include <string>

#include "vkc/partitioner/partition.h"

namespace vkc::partitioner {

/// Why a runtime node cannot run in a delegate under `limits`, or nullopt.
std::optional<std::string> node_misfit(const ir::Node& n, const DeviceLimits& limits);
/// Puts et_vk.prepack in front of constants that the consuming op does not prepack itself.
void insert_prepack(ir::Graph& g, Delegate& d);
/// Chooses a representation for every tensor of `d`; inserts aten.clone where a consumer needs another.
void tag_storage(ir::Graph& g, Delegate& d, const DeviceLimits& limits, bool size_independent_layouts = false);
/// Greedy shared-object assignment for the delegate's intermediate tensors.
void plan_memory(Delegate& d);

}  // namespace vkc::partitioner
