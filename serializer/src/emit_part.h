// Emitting a program's chain piece by piece: each partitioned graph (a part) appends its
// delegate and kernel calls to one ExecutionPlan. A plain program is one part; a program that
// picks between branches at run time (build_branching_program) is several.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "plan_builder.h"
#include "vkc/partitioner/partition.h"
#include "vkc/serializer/build_program.h"
#include "vkc/serializer/embed_shaders.h"

namespace vkc::serializer::detail {

/// What every part of one plan shares: the program, its values, the payload rules and specs,
/// and the portable operators already named.
struct PartContext {
  PartContext(Program& p, const CompileOptions& options, bool fallback, ShaderEmbedding* embedding)
      : program(p), pb(p), rules(DtypeRules::from(options)), specs(options.to_specs()), cpu_fallback(fallback),
        shaders(embedding) {}
  Program& program;
  PlanBuilder pb;
  DtypeRules rules;
  std::vector<CompileSpec> specs;
  bool cpu_fallback;
  ShaderEmbedding* shaders;
  uint64_t defer_keys_from = 0;  // build_vk_graph's
  std::map<std::pair<std::string, std::string>, int32_t> operator_index;
};

/// Appends one part's calls, in dependency order, to the plan's chain; returns the value ids of
/// its graph outputs. Its graph inputs take whatever ids were bound to them (PlanBuilder::bind).
std::vector<int32_t> emit_part(PartContext& cx, const ir::Graph& g, const partitioner::Partition& p);

/// Names the plan "forward", sizes its arena, records the I/O names (from `g`) and adds the plan.
void finish_program(PartContext& cx, const ir::Graph& g);

}  // namespace vkc::serializer::detail
