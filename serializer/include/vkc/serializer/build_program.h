// Turns a partitioned graph into the Program the .pte writer stores: one
// execution plan "forward" whose chain calls each VulkanBackend delegate, each
// delegate's VkGraph payload, and the constants as named data.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "vkc/ir/graph.h"
#include "vkc/partitioner/partition.h"
#include "vkc/serializer/compile_options.h"
#include "vkc/serializer/program.h"
#include "vkc/serializer/vk_graph.h"

namespace vkc::serializer {

inline constexpr const char* kVulkanBackendId = "VulkanBackend";

/// Dtype rules applied while writing payloads (as ET-VK does at serialization).
struct DtypeRules {
  bool downcast_64_bit = true;  // i64 -> INT32, f64 -> FLOAT32 on the GPU
  bool force_fp16 = false;      // f32 -> FLOAT16 on the GPU (constants converted), I/O staging stays f32
  /// require_dynamic_shapes: every Int and IntList argument is a value of its own (others share
  /// one value per distinct scalar), so that the ones that follow a dynamic dim can become SymInts.
  bool own_integers = false;

  static DtypeRules from(const CompileOptions& o) {
    return {o.downcast_64_bit.value_or(true), o.force_fp16.value_or(false), o.require_dynamic_shapes.value_or(false)};
  }
};

/// The VkGraph of one delegate; constants it references are appended to `named_data` (deduplicated by key).
/// `defer_keys_from` > 0: constants of at least that many bytes are not hashed here but named by a
/// placeholder (NamedData::deferred) that the .pte / .ptd writers replace by the key, hashing them as
/// they write them (read once, not twice); constants that fingerprint alike are hashed here. Only
/// for a program whose constants no other graph's are compared with by key (one graph, one
/// delegate: a placeholder is the same for equal constants, but not proven different for others).
VkGraph build_vk_graph(const partitioner::Delegate& d, const DtypeRules& rules, std::vector<NamedData>& named_data,
                       uint64_t defer_keys_from = 0);

/// The ExecuTorch portable kernel (out variant) a KernelCall names for a runtime operator, e.g.
/// "aten.convolution.default" -> {"aten::convolution", "out"}; nullopt for et_vk ops.
std::optional<Operator> portable_kernel(const std::string& runtime_op);

struct ShaderEmbedding;

/// The whole program. `shaders` (optional) selects the shader library whose SPIR-V each
/// delegate's payload embeds (see embed_shaders.h). Nodes outside every delegate become KernelCalls of ExecuTorch's portable
/// kernels (`aten::<op>.out`) when `cpu_fallback` is set; otherwise, or for operators without a
/// portable kernel (et_vk.*, ONNX nodes), build_program throws SerializeError naming the node.
/// `defer_keys_from`: build_vk_graph's, for a partition of one delegate.
Program build_program(const ir::Graph& g, const partitioner::Partition& p, const CompileOptions& options,
                      bool cpu_fallback = false, ShaderEmbedding* shaders = nullptr, uint64_t defer_keys_from = 0);

/// One straight-line part of a program: a partitioned graph.
struct ProgramPart {
  const ir::Graph* graph = nullptr;
  const partitioner::Partition* partition = nullptr;
};

/// A test of the size an input has as the program runs: dim `axis` of plan input `input` is `size`.
struct ShapeTest {
  int input = 0;
  int axis = 0;
  int64_t size = 0;
};

/// A program that picks one of two programs at run time, as an ONNX If whose branches differ in
/// shape and whose condition is known only then: `condition` computes the condition (its graph's
/// one output, a one-element bool tensor), `condition_input` names the plan input that is it, or
/// `shape_tests` (all must hold) check the inputs' sizes (a model compiled for several sizes of a
/// symbolic dim); then `then_branch` or `else_branch` runs. Failed shape tests with no else
/// branch fail the run (a JumpFalseCall on a None value). A leaf is one whole program
/// (`leaf`). Every part's graph has the same inputs, in the same order; an input whose sizes
/// differ between the parts is dynamic-bound by the largest.
struct BranchTree {
  ProgramPart leaf;
  std::optional<ProgramPart> condition;
  int condition_input = -1;
  std::vector<ShapeTest> shape_tests;
  std::unique_ptr<BranchTree> then_branch, else_branch;
  bool is_leaf() const { return !then_branch; }
};

/// The program of a BranchTree: one chain in which each condition's part is followed by a
/// JumpFalseCall to its else branch, the then branch ends with an unconditional jump past it, and
/// each leaf moves its outputs into the plan's outputs (MoveCall; they are not memory-planned, and
/// dynamic-bound where the leaves' shapes differ). ExecuTorch's runtime runs such chains as it
/// runs torch.cond's.
Program build_branching_program(const BranchTree& tree, const CompileOptions& options, bool cpu_fallback = false,
                                ShaderEmbedding* shaders = nullptr);

}  // namespace vkc::serializer
