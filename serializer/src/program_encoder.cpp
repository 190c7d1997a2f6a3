#include <numeric>

#include "program_codec.h"

namespace vkc::serializer::detail {
namespace {

namespace fb = executorch_flatbuffer;
using flatbuffers::FlatBufferBuilder;
using flatbuffers::Offset;

// Nested objects are always built in their own statement, before the table
// that refers to them, so the byte layout never depends on the compiler's
// argument evaluation order.

Offset<fb::Tensor> encode_tensor(FlatBufferBuilder& b, const EtTensor& t) {
  std::vector<uint8_t> dim_order = t.dim_order;
  if (dim_order.empty()) {
    dim_order.resize(t.sizes.size());
    std::iota(dim_order.begin(), dim_order.end(), uint8_t{0});
  }
  auto sizes = b.CreateVector(t.sizes);
  auto order = b.CreateVector(dim_order);
  Offset<fb::AllocationDetails> allocation = 0;
  if (t.allocation)
    allocation = fb::CreateAllocationDetails(b, t.allocation->memory_id, uint32_t(t.allocation->offset),
                                             uint32_t(t.allocation->offset >> 32));
  return fb::CreateTensor(b, static_cast<fb::ScalarType>(t.scalar_type), /*storage_offset=*/0, sizes, order,
                          /*requires_grad=*/false, t.data_buffer_idx, allocation, /*layout=*/0,
                          static_cast<fb::TensorShapeDynamism>(t.dynamism));
}

struct ValueEncoder {
  FlatBufferBuilder& b;
  using Result = std::pair<fb::KernelTypes, Offset<void>>;

  Result operator()(const EtNull&) { return {fb::KernelTypes::Null, fb::CreateNull(b).Union()}; }
  Result operator()(int64_t v) { return {fb::KernelTypes::Int, fb::CreateInt(b, v).Union()}; }
  Result operator()(bool v) { return {fb::KernelTypes::Bool, fb::CreateBool(b, v).Union()}; }
  Result operator()(double v) { return {fb::KernelTypes::Double, fb::CreateDouble(b, v).Union()}; }
  Result operator()(const EtTensor& t) { return {fb::KernelTypes::Tensor, encode_tensor(b, t).Union()}; }
  Result operator()(const std::string& s) {
    auto str = b.CreateString(s);
    return {fb::KernelTypes::String, fb::CreateString(b, str).Union()};
  }
  Result operator()(const EtIntList& l) {
    auto items = b.CreateVector(l.items);
    return {fb::KernelTypes::IntList, fb::CreateIntList(b, items).Union()};
  }
  Result operator()(const EtDoubleList& l) {
    auto items = b.CreateVector(l.items);
    return {fb::KernelTypes::DoubleList, fb::CreateDoubleList(b, items).Union()};
  }
  Result operator()(const EtBoolList& l) {
    auto items = b.CreateVector(l.items);
    return {fb::KernelTypes::BoolList, fb::CreateBoolList(b, items).Union()};
  }
  Result operator()(const EtTensorList& l) {
    auto items = b.CreateVector(l.items);
    return {fb::KernelTypes::TensorList, fb::CreateTensorList(b, items).Union()};
  }
  Result operator()(const EtOptionalTensorList& l) {
    auto items = b.CreateVector(l.items);
    return {fb::KernelTypes::OptionalTensorList, fb::CreateOptionalTensorList(b, items).Union()};
  }
};

struct InstructionEncoder {
  FlatBufferBuilder& b;
  using Result = std::pair<fb::InstructionArguments, Offset<void>>;

  Result operator()(const KernelCall& k) {
    auto args = b.CreateVector(k.args);
    return {fb::InstructionArguments::KernelCall, fb::CreateKernelCall(b, k.op_index, args).Union()};
  }
  Result operator()(const DelegateCall& d) {
    auto args = b.CreateVector(d.args);
    return {fb::InstructionArguments::DelegateCall, fb::CreateDelegateCall(b, d.delegate_index, args).Union()};
  }
  Result operator()(const MoveCall& m) {
    return {fb::InstructionArguments::MoveCall, fb::CreateMoveCall(b, m.from, m.to).Union()};
  }
  Result operator()(const JumpFalseCall& j) {
    return {fb::InstructionArguments::JumpFalseCall, fb::CreateJumpFalseCall(b, j.cond, j.destination).Union()};
  }
  Result operator()(const FreeCall& f) {
    return {fb::InstructionArguments::FreeCall, fb::CreateFreeCall(b, f.value).Union()};
  }
};

Offset<fb::BackendDelegate> encode_delegate(FlatBufferBuilder& b, const BackendDelegate& d, uint32_t segment) {
  auto id = b.CreateString(d.id);
  auto processed = fb::CreateBackendDelegateDataReference(b, fb::DataLocation::SEGMENT, segment);
  std::vector<Offset<fb::CompileSpec>> specs;
  for (const CompileSpec& spec : d.compile_specs) {
    auto key = b.CreateString(spec.key);
    auto value = b.CreateVector(spec.value);
    specs.push_back(fb::CreateCompileSpec(b, key, value));
  }
  auto specs_vec = b.CreateVector(specs);
  return fb::CreateBackendDelegate(b, id, processed, specs_vec);
}

Offset<fb::Chain> encode_chain(FlatBufferBuilder& b, const std::vector<Instruction>& instructions) {
  std::vector<Offset<fb::Instruction>> out;
  for (const Instruction& instr : instructions) {
    auto [type, args] = std::visit(InstructionEncoder{b}, instr);
    out.push_back(fb::CreateInstruction(b, type, args));
  }
  auto inputs = b.CreateVector(std::vector<int32_t>{});
  auto outputs = b.CreateVector(std::vector<int32_t>{});
  auto instrs = b.CreateVector(out);
  return fb::CreateChain(b, inputs, outputs, instrs);
}

Offset<fb::ExecutionPlan> encode_plan(FlatBufferBuilder& b, const ExecutionPlan& plan,
                                      const std::vector<uint32_t>& delegate_segments) {
  auto name = b.CreateString(plan.name);
  std::vector<Offset<fb::EValue>> values;
  for (const EtValue& value : plan.values) {
    auto [type, val] = std::visit(ValueEncoder{b}, value);
    values.push_back(fb::CreateEValue(b, type, val));
  }
  auto values_vec = b.CreateVector(values);
  auto inputs = b.CreateVector(plan.inputs);
  auto outputs = b.CreateVector(plan.outputs);
  auto chain = encode_chain(b, plan.instructions);
  auto chains = b.CreateVector(&chain, 1);
  std::vector<Offset<fb::Operator>> operators;
  for (const Operator& op : plan.operators) {
    auto op_name = b.CreateString(op.name);
    auto overload = b.CreateString(op.overload);
    operators.push_back(fb::CreateOperator(b, op_name, overload));
  }
  auto operators_vec = b.CreateVector(operators);
  std::vector<Offset<fb::BackendDelegate>> delegates;
  for (size_t i = 0; i < plan.delegates.size(); ++i)
    delegates.push_back(encode_delegate(b, plan.delegates[i], delegate_segments[i]));
  auto delegates_vec = b.CreateVector(delegates);
  auto buffer_sizes = b.CreateVector(plan.non_const_buffer_sizes);
  return fb::CreateExecutionPlan(b, name, /*container_meta_type=*/0, values_vec, inputs, outputs, chains,
                                 operators_vec, delegates_vec, buffer_sizes);
}

}  // namespace

std::vector<uint8_t> encode_program(const Program& program, const SegmentPlan& layout) {
  FlatBufferBuilder b(1024);
  std::vector<Offset<fb::ExecutionPlan>> plans;
  for (size_t i = 0; i < program.plans.size(); ++i)
    plans.push_back(encode_plan(b, program.plans[i], layout.delegate_segments[i]));
  auto plans_vec = b.CreateVector(plans);
  auto constant_buffer = b.CreateVector(std::vector<Offset<fb::Buffer>>{});
  auto delegate_data = b.CreateVector(std::vector<Offset<fb::BackendDelegateInlineData>>{});
  std::vector<Offset<fb::DataSegment>> segments;
  for (const SegmentInfo& s : layout.segments) segments.push_back(fb::CreateDataSegment(b, s.offset, s.size));
  auto segments_vec = b.CreateVector(segments);
  auto offsets = b.CreateVector(layout.constant_offsets);
  auto constant_segment = fb::CreateSubsegmentOffsets(b, /*segment_index=*/0, offsets);
  Offset<flatbuffers::Vector<Offset<fb::NamedData>>> named_vec = 0;
  if (!layout.named_data.empty()) {
    std::vector<Offset<fb::NamedData>> named;
    for (const auto& [key, segment] : layout.named_data) {
      auto key_str = b.CreateString(key);
      named.push_back(fb::CreateNamedData(b, key_str, segment));
    }
    named_vec = b.CreateVector(named);
  }
  auto root = fb::CreateProgram(b, /*version=*/0, plans_vec, constant_buffer, delegate_data, segments_vec,
                                constant_segment, /*mutable_data_segments=*/0, named_vec);
  b.Finish(root, fb::ProgramIdentifier());
  return {b.GetBufferPointer(), b.GetBufferPointer() + b.GetSize()};
}

}  // namespace vkc::serializer::detail
