// Evaluating one value of a graph with the folders, some of its run-time inputs bound to given
// values: what a value computed from an input would be for each value that input may take.
#pragma once

#include <map>
#include <optional>
#include <vector>

#include "vkc/ir/graph.h"
#include "vkc/kernels/host_tensor.h"

namespace vkc::passes::folding {

/// `target` computed from constants, static shapes (Shape, Size) and `bound` (values for graph
/// inputs or other values); nullopt when its cone reads anything else (an unbound input, a node of
/// another domain or without a folder) or a folder fails.
std::optional<kernels::HostTensor> evaluate(const ir::Value* target,
                                            const std::map<const ir::Value*, kernels::HostTensor>& bound);
/// Several values at once: what their cones share is computed once.
std::vector<std::optional<kernels::HostTensor>> evaluate(const std::vector<const ir::Value*>& targets,
                                                         const std::map<const ir::Value*, kernels::HostTensor>& bound);

}  // namespace vkc::passes::folding
