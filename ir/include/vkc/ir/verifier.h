// Structural checks every pass must preserve.
#pragma once

#include <string>
#include <vector>

#include "vkc/ir/graph.h"

namespace vkc::ir {

/// Problems found, one line each, naming the node or value; empty when the graph is valid.
/// Checks: nodes in topological order (so acyclic), every input defined before use, each
/// value produced once, graph outputs defined, constants sized as dtype x static shape,
/// and, for runtime (kVulkanDomain) nodes, arity against the op's schema.
std::vector<std::string> verify(const Graph& g);

/// Throws std::runtime_error with the first problem found.
void verify_or_throw(const Graph& g);

}  // namespace vkc::ir
