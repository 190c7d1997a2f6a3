// The partition report: per node its delegate or the reason it was left out, per
// tensor its storage, layout and memory object, and totals. `vkc compile --report`
// writes it as JSON, `--report-dot` draws the graph coloured by partition.
#pragma once

#include <string>

#include "vkc/ir/graph.h"
#include "vkc/partitioner/limits.h"
#include "vkc/partitioner/partition.h"
#include "vkc/passes/pass.h"

namespace vkc::compiler {

/// With `attention`: an "attention" list, per attention its form (fused or why not; its cache).
std::string partition_report_json(const ir::Graph& g, const partitioner::Partition& p,
                                  const partitioner::DeviceLimits& limits,
                                  const std::vector<passes::PassContext::AttentionDecision>& attention = {});
/// Graphviz: one colour per delegate, nodes left out in red with their reason as tooltip.
std::string partition_report_dot(const ir::Graph& g, const partitioner::Partition& p);

}  // namespace vkc::compiler
