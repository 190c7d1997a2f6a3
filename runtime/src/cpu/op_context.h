// The arguments of one OperatorCall as a CPU kernel sees them: CallArgs' strict decoding plus
// the tensors of the running graph.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "../call_args.h"
#include "vkc/kernels/host_tensor.h"
#include "vkc/serializer/vk_graph.h"

namespace vkc::runtime::cpu {

using kernels::HostTensor;

/// The values of one VkGraph while it runs: tensors by value id, and which value last wrote
/// each shared memory object (so a read after the memory plan reused it is caught).
struct GraphState {
  const serializer::VkGraph* graph = nullptr;
  std::vector<std::optional<HostTensor>> tensors;  // by value id
  std::unordered_map<int32_t, int32_t> mem_owner;  // mem_obj_id -> value id holding it
  /// SymInt values set at run time (et_vk.select_as_symint), by value id.
  std::unordered_map<int32_t, int64_t> symints;
  /// State that outlives one execute (KV caches), by (chain index, slot); never reset, and shared
  /// by the instances of one delegate at several sizes.
  std::shared_ptr<std::map<std::pair<size_t, int>, HostTensor>> persistent =
      std::make_shared<std::map<std::pair<size_t, int>, HostTensor>>();

  const serializer::VkTensor* vk_tensor(int32_t id) const;
  /// Stores `t` as value `id`: checks its shape against the payload's dims and converts it to
  /// the value's GPU dtype. `where` prefixes errors.
  void store(int32_t id, HostTensor t, const std::string& where);
  /// The tensor `id` holds; errors when it was never written or its memory was reused.
  const HostTensor& load(int32_t id, const std::string& where) const;
};

class OpContext : public CallArgs {
 public:
  OpContext(GraphState& state, const serializer::VkOperatorCall& call);

  const std::string& op() const { return call_->name; }

  // ---- arguments: CallArgs (the output slot is not readable), and the tensors
  const HostTensor& tensor(size_t i) const;
  const HostTensor* opt_tensor(size_t i) const;  // Null: nullptr
  std::vector<const HostTensor*> tensor_list(size_t i) const;

  /// The payload's declaration of the (single) output value.
  const serializer::VkTensor* output_spec() const { return state_.vk_tensor(call_->args.back()); }
  /// The single output tensor.
  void set_output(HostTensor t) const;
  /// A ValueList output: one tensor per listed value, in order.
  void set_outputs(std::vector<HostTensor> ts) const;
  /// The output is a SymInt: its value for the rest of this run.
  void set_symint_output(int64_t v) const;
  /// Stores `t` as tensor argument `i` (an operator that updates an input in place).
  void set_input_tensor(size_t i, HostTensor t) const;
  /// This call's state `slot` kept across runs; created as zeros of `like`'s dtype and shape.
  HostTensor& persistent(int slot, const HostTensor& like) const;

 private:
  GraphState& state_;
};

using OpFn = void (*)(const OpContext&);
using OpTable = std::unordered_map<std::string, OpFn>;

/// Every runtime operator the CPU backend runs, by name.
const OpTable& op_table();
void add_conv_linear_ops(OpTable& t);
void add_elementwise_ops(OpTable& t);
void add_index_ops(OpTable& t);
void add_norm_pool_ops(OpTable& t);
void add_shape_ops(OpTable& t);
void add_llm_ops(OpTable& t);
void add_quant_ops(OpTable& t);

}  // namespace vkc::runtime::cpu
