// The runtime operators vkc can emit: one entry per operator the ExecuTorch
// Vulkan runtime registers. Lowering may only produce names found here, and the
// partitioner, the serializer and the inspector read their facts from here.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "vkc/ir/dtype.h"
#include "vkc/ir/graph.h"
#include "vkc/ir/op_schema.h"
#include "vkc/ir/storage.h"

namespace vkc::ir {

struct OpDef {
  OpSchema schema;
  /// Dtypes the op accepts for its primary input (all inputs of a Tensor[] argument).
  DTypeSet dtypes;
  /// Representations the op accepts for its primary input and produces for its outputs.
  RepSet io_reps;
  /// Positions among the tensor arguments that the op reads from a constant
  /// directly (it prepacks them itself). Constants anywhere else need et_vk.prepack.
  std::vector<size_t> self_prepacked;
  /// Whether the op accepts tensors of rank > 4.
  bool supports_highdim = false;
  /// For ops whose representations depend on the call (reductions): replaces io_reps.
  RepSet (*reps_for)(const Node&) = nullptr;
  /// Static-int8 (q8ta) operators: their non-constant Int8 tensors are packed int8 buffers
  /// (kInt8x4). int8_layout is the packed layout they need; none: the primary int8 input's
  /// (or, for an op without one, the layout its consumer needs).
  bool packed_int8 = false;
  std::optional<Layout> int8_layout = std::nullopt;

  /// The representations a particular call of the op accepts.
  RepSet reps(const Node& n) const { return reps_for ? reps_for(n) : io_reps; }
  const std::string& name() const { return schema.name; }
  const std::string& family() const { return schema.family; }
  bool prepacks(size_t tensor_arg) const;
};

/// Whether `v` is a packed int8 activation: an Int8 tensor a q8ta operator (OpDef::packed_int8)
/// produces, directly or through layout transitions (aten.clone).
bool is_packed_int8_value(const Value* v);

/// The entry for a runtime operator name; null when vkc does not know it.
const OpDef* find_op(std::string_view name);
/// Every entry, in registry order.
const std::vector<OpDef>& all_ops();
/// The family of an operator name, or "other" for names not in the registry.
std::string_view op_family(std::string_view name);

/// Name of the prepack operator inserted in front of constants.
inline constexpr std::string_view kPrepackOp = "et_vk.prepack.default";

}  // namespace vkc::ir
