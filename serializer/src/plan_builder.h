// Plan-level values of the ExecutionPlan being built: tensors crossing a delegate or
// the graph boundary (each in its own 16-aligned slot of memory arena 1), constants
// of CPU kernels (in the constant segment), and the scalar arguments of KernelCalls.
#pragma once

#include <unordered_map>

#include "vkc/ir/graph.h"
#include "vkc/ir/op_schema.h"
#include "vkc/serializer/program.h"

namespace vkc::serializer::detail {

class PlanBuilder {
 public:
  explicit PlanBuilder(Program& program) : program_(program) {}

  /// The value id of a tensor (planned memory, or a constant-segment constant).
  int32_t tensor(const ir::Value* v);
  /// The value id of a scalar argument of kind `kind` (None: Null).
  int32_t scalar(const ir::Attribute& a, ir::ArgKind kind);
  int32_t tensor_list(const std::vector<int32_t>& ids);
  /// A planned tensor of `v`'s dtype that holds up to `bound` (dynamic-bound where that is not
  /// `v`'s own shape): one plan input that parts compiled for different sizes share.
  int32_t bounded_tensor(const ir::Value* v, const std::vector<int64_t>& bound);
  /// Gives `v` the existing value id `id` (one plan input shared by several parts' graphs).
  void bind(const ir::Value* v, int32_t id) { ids_[v] = id; }
  /// Appends a value as it is (a plan output that MoveCalls fill, say).
  int32_t push(EtValue v);
  ExecutionPlan& plan() { return plan_; }
  uint64_t arena() const { return arena_; }

 private:
  Program& program_;
  ExecutionPlan plan_;
  std::unordered_map<const ir::Value*, int32_t> ids_;
  uint64_t arena_ = 0;
};

/// ExecuTorch's ScalarType for a value's dtype; throws SerializeError when there is none.
ScalarType scalar_type(const ir::Value* v);

}  // namespace vkc::serializer::detail
