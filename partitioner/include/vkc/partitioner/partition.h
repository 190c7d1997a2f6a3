// Splits a lowered graph into VulkanBackend delegates and prepares each one:
// which nodes each delegate runs (and why the others are left out), prepack and
// layout-transition nodes, the storage/layout of every tensor, and the
// shared-memory plan.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "vkc/ir/graph.h"
#include "vkc/ir/storage.h"
#include "vkc/partitioner/limits.h"

namespace vkc::partitioner {

struct PartitionOptions {
  DeviceLimits limits;
  /// Leave every tensor in its own memory (mem_obj_id -1) instead of sharing.
  bool skip_memory_planning = false;
  /// Choose layouts without looking at dim sizes (a program whose dims resize: a dim of size 1
  /// at one size is not at another, and the programs compiled at each must agree).
  bool size_independent_layouts = false;
};

struct TensorPlacement {
  ir::TensorRep rep;
  /// Tensors with the same id share one memory object; -1: own memory.
  int32_t mem_obj_id = -1;
};

struct Delegate {
  std::vector<ir::Node*> nodes;    // topological order
  std::vector<ir::Value*> inputs;  // non-constant values read from outside the delegate
  std::vector<ir::Value*> outputs; // values read after the delegate or returned by the graph
  /// Every non-constant tensor the delegate reads or writes.
  std::unordered_map<const ir::Value*, TensorPlacement> placement;
  int32_t num_memory_objects = 0;
};

struct NodeDecision {
  std::string node;
  std::string op;         // qualified op type
  int delegate = -1;      // index into Partition::delegates, -1 when left out
  std::string reason;     // why it was left out
};

struct Partition {
  std::vector<Delegate> delegates;
  std::vector<NodeDecision> decisions;  // one per node of the graph, in order
  size_t num_rejected() const;
};

/// Partitions `g`, inserting prepack and transition nodes into it. `not_lowered`
/// gives the reason for nodes that lowering left in ONNX form.
Partition partition_graph(ir::Graph& g, const PartitionOptions& options,
                          const std::map<std::string, std::string>& not_lowered = {});

}  // namespace vkc::partitioner
