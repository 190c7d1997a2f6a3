// A run-time If whose branches differ in shape: the model is compiled once per branch with the
// If's condition bound, and the program picks one of them as it runs (serializer::BranchTree).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "vkc/ir/graph.h"
#include "vkc/partitioner/partition.h"
#include "vkc/passes/pass.h"
#include "vkc/serializer/build_program.h"

namespace vkc::compiler::detail {

/// If conditions fixed for one compile: value name (as imported) -> the branch taken.
using Bindings = std::map<std::string, bool>;

/// The model compiled as far as partitioning under some Bindings.
struct Part {
  std::shared_ptr<ir::Graph> graph;
  partitioner::Partition partition;
  /// Conditions (value names as imported) of the Ifs over branches of different shapes that
  /// stayed open, in graph order: each needs the program split.
  std::vector<std::string> open_conditions;
  std::vector<std::string> notes;
  std::vector<passes::PassContext::AttentionDecision> attention;
  /// --encoder: the encoder's graph compiled beside this part (the step's context computation
  /// moved into it), and what its passes could not lower.
  std::shared_ptr<ir::Graph> encoder;
  std::map<std::string, std::string> encoder_not_lowered;
};

/// Compiles the model under `bindings`; with `output`, that value is the graph's only output
/// (a condition's part). Throws CompileError.
using PartCompiler = std::function<Part(const Bindings& bindings, const std::string* output)>;

/// Replaces each bound value of `g` by a one-element bool constant. Throws CompileError when one
/// is missing.
void bind_conditions(ir::Graph& g, const Bindings& bindings);

/// The output of a condition's part: `cond` as a [1] bool tensor (one element, as ONNX requires of
/// an If condition; ExecuTorch's delegates take no 0-d outputs from operators that broadcast).
ir::Value* condition_output(ir::Graph& g, ir::Value* cond);

/// The condition value name of each vkc::IfSelect of a freshly imported graph, by node name.
std::map<std::string, std::string> if_conditions(const ir::Graph& g);

/// The conditions of the IfSelects still in `g` (after the passes), named through `conditions`.
std::vector<std::string> open_conditions(const ir::Graph& g, const std::map<std::string, std::string>& conditions);

/// The parts of a split program and its tree (whose parts point into `parts`).
struct Split {
  std::vector<std::unique_ptr<Part>> parts;
  std::unique_ptr<serializer::BranchTree> tree;
  std::vector<const Part*> leaves;  // in chain order
  std::vector<const Part*> condition_parts;  // the programs computing conditions
  std::vector<std::string> conditions;  // each condition split on, once
};

/// At most this many whole programs (branch combinations) in one .pte.
inline constexpr size_t kMaxBranchPrograms = 8;

/// Splits `root` (which has open conditions) on each open condition in turn: a condition's part
/// (or the input it is), then the program compiled with it true and with it false, recursively.
Split split_on_conditions(const Part& root, const PartCompiler& compile);

}  // namespace vkc::compiler::detail
