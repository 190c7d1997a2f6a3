// Data-movement chains: a value reached from another through Reshape/Transpose/Unsqueeze/
// Squeeze/Flatten/Expand/Tile nodes whose shape arguments are constants. Exporters spell one
// movement many ways (a transpose of the last two axes as Reshape -> Transpose(0,2,1) ->
// Reshape; a grouped-query head repeat as Unsqueeze -> Expand -> Reshape). Rather than match
// each spelling, a chain is run on an index tensor (iota) and the result compared with the
// movement a fusion needs.
#pragma once

#include <functional>
#include <optional>
#include <vector>

#include "vkc/ir/graph.h"
#include "vkc/kernels/host_tensor.h"

namespace vkc::passes {

/// An int64 tensor of `shape` holding 0, 1, 2, ... (row-major).
kernels::HostTensor iota(const std::vector<int64_t>& shape);

/// Runs `chain` (producer first) on `x` with the CPU reference kernels; nullopt when a node's
/// other inputs are not constants or a node cannot be evaluated.
std::optional<kernels::HostTensor> run_chain(const std::vector<ir::Node*>& chain, kernels::HostTensor x);

/// Walks back from `v` through data-movement nodes (at most `max_steps`), each intermediate value
/// used once. For each value reached whose shape is static, with at most `max_elements`
/// elements, calls `accept(source, mapped)` where `mapped` is the chain run on iota(source's
/// shape); returns the first source accepted and, in `chain`, the nodes between (producer first).
/// Also tries `v` itself with an empty chain first.
ir::Value* find_view_source(const ir::Graph& g, ir::Value* v,
                            const std::function<bool(const ir::Value*, const kernels::HostTensor&)>& accept,
                            std::vector<ir::Node*>* chain = nullptr, int max_steps = 8,
                            int64_t max_elements = int64_t{1} << 24);

/// Whether `a` and `b` have the same shape and elements.
bool same_tensor(const kernels::HostTensor& a, const kernels::HostTensor& b);

}  // namespace vkc::passes
