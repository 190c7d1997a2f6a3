// Branches of an If that cannot run for the compiled input shapes (fold-constants' helper).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "vkc/ir/graph.h"

namespace vkc::passes::folding {

/// Resolves each vkc::IfSelect (an If output whose branches differ in type or shape, its condition
/// unknown) where exactly one branch depends on a node in `contradictions` (node name -> why: its
/// static input shapes break the operator's contract, so that branch fails for every input, in
/// onnxruntime too): the output becomes the other branch's value. Nested Ifs are resolved inside
/// out. Adds a note per resolution to `notes`; returns whether anything changed.
bool take_well_formed_branches(ir::Graph& g, const std::map<std::string, std::string>& contradictions,
                               std::vector<std::string>& notes);

}  // namespace vkc::passes::folding
