// Human-readable text of a graph, for --dump-ir-after and test expectations:
//
//   graph main(%x: f32[1,3,8,8]) -> (%y) {
//     %w: f32[4,3,3,3] = constant 432 bytes
//     %y: f32[1,4,8,8] = vk.aten.convolution.default(%x, %w, None) {groups=1, padding=[1,1], ...}
//   }
#pragma once

#include <string>

#include "vkc/ir/graph.h"

namespace vkc::ir {

std::string print_graph(const Graph& g);
/// One node on one line, as print_graph writes it.
std::string print_node(const Node& n);

}  // namespace vkc::ir
