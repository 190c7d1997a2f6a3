// The pass pipeline, declared in one place (src/pipeline.cpp).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "vkc/passes/pass.h"

namespace vkc::passes {

/// The passes `vkc compile` runs, in order.
const std::vector<PassInfo>& pipeline();
/// The pass with this name, or null.
const PassInfo* find_pass(std::string_view name);

struct PipelineHooks {
  /// Called after each pass with the graph as that pass left it.
  std::function<void(const PassInfo&, const ir::Graph&)> after_pass;
  /// Passes not to run (--skip-pass; validate with check_skippable first).
  std::vector<std::string> skip;
};

/// Empty when `name` names a pass that may be skipped; else why not (unknown, or required).
std::string check_skippable(std::string_view name);

/// Runs every pass, verifying the graph after each. A failure is rethrown as
/// PassError "pass 'NAME': <what went wrong, naming the node>".
void run_pipeline(ir::Graph& g, PassContext& ctx, const PipelineHooks& hooks = {});

}  // namespace vkc::passes
