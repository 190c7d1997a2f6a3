#include <fmt/format.h>

#include "flatbuffer_util.h"
#include "program_codec.h"

namespace vkc::serializer::detail {
namespace {

namespace fb = executorch_flatbuffer;

EtTensor decode_tensor(const fb::Tensor& t) {
  EtTensor out;
  out.scalar_type = static_cast<ScalarType>(t.scalar_type());
  out.sizes = to_vector<int32_t>(t.sizes());
  out.dim_order = to_vector<uint8_t>(t.dim_order());
  out.data_buffer_idx = t.data_buffer_idx();
  if (const fb::AllocationDetails* a = t.allocation_info())
    out.allocation = AllocationInfo{
        a->memory_id(), uint64_t(a->memory_offset_low()) | uint64_t(a->memory_offset_high()) << 32};
  out.dynamism = static_cast<ShapeDynamism>(t.shape_dynamism());
  return out;
}

EtValue decode_value(const fb::EValue& v, const std::string& what) {
  using fb::KernelTypes;
  switch (v.val_type()) {
    case KernelTypes::Null: return EtNull{};
    case KernelTypes::Int: return require(v.val_as_Int(), what).int_val();
    case KernelTypes::Bool: return require(v.val_as_Bool(), what).bool_val();
    case KernelTypes::Double: return require(v.val_as_Double(), what).double_val();
    case KernelTypes::Tensor: return decode_tensor(require(v.val_as_Tensor(), what));
    case KernelTypes::String: return to_string(require(v.val_as_String(), what).string_val());
    case KernelTypes::IntList: return EtIntList{to_vector<int64_t>(require(v.val_as_IntList(), what).items())};
    case KernelTypes::DoubleList:
      return EtDoubleList{to_vector<double>(require(v.val_as_DoubleList(), what).items())};
    case KernelTypes::BoolList: return EtBoolList{to_vector<bool>(require(v.val_as_BoolList(), what).items())};
    case KernelTypes::TensorList:
      return EtTensorList{to_vector<int32_t>(require(v.val_as_TensorList(), what).items())};
    case KernelTypes::OptionalTensorList:
      return EtOptionalTensorList{to_vector<int32_t>(require(v.val_as_OptionalTensorList(), what).items())};
    default: throw SerializeError(fmt::format("{} has unknown type tag {}", what, int(v.val_type())));
  }
}

Instruction decode_instruction(const fb::Instruction& instr, const std::string& what) {
  using fb::InstructionArguments;
  switch (instr.instr_args_type()) {
    case InstructionArguments::KernelCall: {
      const fb::KernelCall& k = require(instr.instr_args_as_KernelCall(), what);
      return KernelCall{k.op_index(), to_vector<int32_t>(k.args())};
    }
    case InstructionArguments::DelegateCall: {
      const fb::DelegateCall& d = require(instr.instr_args_as_DelegateCall(), what);
      return DelegateCall{d.delegate_index(), to_vector<int32_t>(d.args())};
    }
    case InstructionArguments::MoveCall: {
      const fb::MoveCall& m = require(instr.instr_args_as_MoveCall(), what);
      return MoveCall{m.move_from(), m.move_to()};
    }
    case InstructionArguments::JumpFalseCall: {
      const fb::JumpFalseCall& j = require(instr.instr_args_as_JumpFalseCall(), what);
      return JumpFalseCall{j.cond_value_index(), j.destination_instruction()};
    }
    case InstructionArguments::FreeCall: return FreeCall{require(instr.instr_args_as_FreeCall(), what).value_index()};
    default: throw SerializeError(fmt::format("{} has unknown type tag {}", what, int(instr.instr_args_type())));
  }
}

}  // namespace

ExecutionPlan decode_plan(const fb::ExecutionPlan& plan, const DelegateDataFn& delegate_data) {
  ExecutionPlan out;
  out.name = to_string(plan.name());
  const std::string where = fmt::format("plan '{}'", out.name);
  if (plan.values())
    for (const fb::EValue* v : *plan.values())
      out.values.push_back(decode_value(*v, fmt::format("{} value {}", where, out.values.size())));
  out.inputs = to_vector<int32_t>(plan.inputs());
  out.outputs = to_vector<int32_t>(plan.outputs());
  const size_t num_chains = plan.chains() ? plan.chains()->size() : 0;
  if (num_chains != 1) throw SerializeError(fmt::format("{} has {} chains; expected 1", where, num_chains));
  if (const auto* instructions = plan.chains()->Get(0)->instructions())
    for (const fb::Instruction* instr : *instructions)
      out.instructions.push_back(
          decode_instruction(*instr, fmt::format("{} instruction {}", where, out.instructions.size())));
  if (plan.operators())
    for (const fb::Operator* op : *plan.operators())
      out.operators.push_back({to_string(op->name()), to_string(op->overload())});
  if (plan.delegates())
    for (const fb::BackendDelegate* d : *plan.delegates()) {
      const std::string what = fmt::format("{} delegate {}", where, out.delegates.size());
      BackendDelegate delegate;
      delegate.id = to_string(d->id());
      delegate.processed = delegate_data(require(d->processed(), what + " data reference"), out.delegates.size());
      if (d->compile_specs())
        for (const fb::CompileSpec* spec : *d->compile_specs())
          delegate.compile_specs.push_back({to_string(spec->key()), to_vector<uint8_t>(spec->value())});
      out.delegates.push_back(std::move(delegate));
    }
  out.non_const_buffer_sizes = to_vector<int64_t>(plan.non_const_buffer_sizes());
  return out;
}

}  // namespace vkc::serializer::detail
