#include "vk_graph_codec.h"

#include <fmt/format.h>

#include "flatbuffer_util.h"
#include "vkc/schema/vk_graph_generated.h"

namespace vkc::serializer::detail {
namespace {

namespace fb = vkgraph;
using flatbuffers::FlatBufferBuilder;
using flatbuffers::Offset;

fb::VkDataType to_fb(VkDataType t) { return static_cast<fb::VkDataType>(t); }
fb::VkStorageType to_fb(StorageType t) { return static_cast<fb::VkStorageType>(t); }
fb::VkMemoryLayout to_fb(MemoryLayout l) { return static_cast<fb::VkMemoryLayout>(l); }

// Builds the union member for one value; returns its tag and offset.
struct ValueEncoder {
  FlatBufferBuilder& b;
  using Result = std::pair<fb::GraphTypes, Offset<void>>;

  Result operator()(const VkNull&) { return {fb::GraphTypes::Null, fb::CreateNull(b).Union()}; }
  Result operator()(int64_t v) { return {fb::GraphTypes::Int, fb::CreateInt(b, v).Union()}; }
  Result operator()(double v) { return {fb::GraphTypes::Double, fb::CreateDouble(b, v).Union()}; }
  Result operator()(bool v) { return {fb::GraphTypes::Bool, fb::CreateBool(b, v).Union()}; }
  Result operator()(const VkTensor& t) {
    auto dims = b.CreateVector(t.dims);
    return {fb::GraphTypes::VkTensor,
            fb::CreateVkTensor(b, to_fb(t.dtype), dims, t.constant_id, t.mem_obj_id, to_fb(t.storage),
                               to_fb(t.layout), to_fb(t.staging))
                .Union()};
  }
  Result operator()(const VkIntList& l) {
    return {fb::GraphTypes::IntList, fb::CreateIntList(b, b.CreateVector(l.items)).Union()};
  }
  Result operator()(const VkDoubleList& l) {
    return {fb::GraphTypes::DoubleList, fb::CreateDoubleList(b, b.CreateVector(l.items)).Union()};
  }
  Result operator()(const VkBoolList& l) {
    return {fb::GraphTypes::BoolList, fb::CreateBoolList(b, b.CreateVector(l.items)).Union()};
  }
  Result operator()(const VkValueList& l) {
    return {fb::GraphTypes::ValueList, fb::CreateValueList(b, b.CreateVector(l.items)).Union()};
  }
  Result operator()(const std::string& s) {
    return {fb::GraphTypes::String, fb::CreateString(b, b.CreateString(s)).Union()};
  }
  Result operator()(const VkSymInt& s) { return {fb::GraphTypes::SymInt, fb::CreateSymInt(b, s.value).Union()}; }
};

Offset<flatbuffers::Vector<Offset<fb::VkBytes>>> encode_bytes(FlatBufferBuilder& b,
                                                             const std::vector<VkBytes>& list) {
  std::vector<Offset<fb::VkBytes>> out;
  for (const VkBytes& bytes : list) {
    auto key = bytes.named_key.empty() ? 0 : b.CreateString(bytes.named_key);
    out.push_back(fb::CreateVkBytes(b, bytes.offset, bytes.length, key));
  }
  return b.CreateVector(out);
}

VkValue decode_value(const fb::VkValue& value, size_t index) {
  const std::string what = fmt::format("VkGraph value {}", index);
  switch (value.value_type()) {
    case fb::GraphTypes::Null: return VkNull{};
    case fb::GraphTypes::Int: return require(value.value_as_Int(), what).int_val();
    case fb::GraphTypes::Double: return require(value.value_as_Double(), what).double_val();
    case fb::GraphTypes::Bool: return require(value.value_as_Bool(), what).bool_val();
    case fb::GraphTypes::VkTensor: {
      const fb::VkTensor& t = require(value.value_as_VkTensor(), what);
      return VkTensor{static_cast<VkDataType>(t.datatype()), to_vector<uint32_t>(t.dims()),
                      t.constant_id(), t.mem_obj_id(), static_cast<StorageType>(t.storage_type()),
                      static_cast<MemoryLayout>(t.memory_layout()),
                      static_cast<VkDataType>(t.staging_datatype())};
    }
    case fb::GraphTypes::IntList:
      return VkIntList{to_vector<int64_t>(require(value.value_as_IntList(), what).items())};
    case fb::GraphTypes::DoubleList:
      return VkDoubleList{to_vector<double>(require(value.value_as_DoubleList(), what).items())};
    case fb::GraphTypes::BoolList:
      return VkBoolList{to_vector<bool>(require(value.value_as_BoolList(), what).items())};
    case fb::GraphTypes::ValueList:
      return VkValueList{to_vector<int32_t>(require(value.value_as_ValueList(), what).items())};
    case fb::GraphTypes::String: return to_string(require(value.value_as_String(), what).string_val());
    case fb::GraphTypes::SymInt: return VkSymInt{require(value.value_as_SymInt(), what).value()};
    default:
      throw SerializeError(fmt::format("{} has unknown type tag {}", what, int(value.value_type())));
  }
}

std::vector<VkBytes> decode_bytes(const flatbuffers::Vector<Offset<fb::VkBytes>>* list) {
  std::vector<VkBytes> out;
  if (!list) return out;
  for (const fb::VkBytes* bytes : *list)
    out.push_back({bytes->offset(), bytes->length(), to_string(bytes->named_key())});
  return out;
}

}  // namespace

std::vector<uint8_t> encode_vk_graph(const VkGraph& graph) {
  FlatBufferBuilder b;
  auto version = b.CreateString(graph.version);
  std::vector<Offset<fb::OperatorCall>> chain;
  for (const VkOperatorCall& call : graph.chain) {
    auto name = b.CreateString(call.name);
    auto args = b.CreateVector(call.args);
    chain.push_back(fb::CreateOperatorCall(b, call.node_id, name, args));
  }
  std::vector<Offset<fb::VkValue>> values;
  for (const VkValue& value : graph.values) {
    auto [type, offset] = std::visit(ValueEncoder{b}, value);
    values.push_back(fb::CreateVkValue(b, type, offset));
  }
  auto chain_vec = b.CreateVector(chain);
  auto values_vec = b.CreateVector(values);
  auto inputs = b.CreateVector(graph.input_ids);
  auto outputs = b.CreateVector(graph.output_ids);
  auto constants = encode_bytes(b, graph.constants);
  auto shaders = encode_bytes(b, graph.shaders);
  auto root = fb::CreateVkGraph(b, version, chain_vec, values_vec, inputs, outputs, constants, shaders,
                                to_fb(graph.storage_type_override), to_fb(graph.memory_layout_override));
  b.Finish(root, fb::VkGraphIdentifier());
  return {b.GetBufferPointer(), b.GetBufferPointer() + b.GetSize()};
}

VkGraph decode_vk_graph(std::span<const uint8_t> flatbuffer) {
  verify_flatbuffer(flatbuffer, fb::VkGraphIdentifier(),
                    [](flatbuffers::Verifier& v) { return fb::VerifyVkGraphBuffer(v); }, "VkGraph");
  const fb::VkGraph& root = *fb::GetVkGraph(flatbuffer.data());
  VkGraph graph;
  graph.version = to_string(root.version());
  if (root.chain())
    for (const fb::OperatorCall* call : *root.chain())
      graph.chain.push_back({call->node_id(), to_string(call->name()), to_vector<int32_t>(call->args())});
  if (root.values())
    for (const fb::VkValue* value : *root.values()) graph.values.push_back(decode_value(*value, graph.values.size()));
  graph.input_ids = to_vector<uint32_t>(root.input_ids());
  graph.output_ids = to_vector<uint32_t>(root.output_ids());
  graph.constants = decode_bytes(root.constants());
  graph.shaders = decode_bytes(root.shaders());
  graph.storage_type_override = static_cast<StorageType>(root.storage_type_override());
  graph.memory_layout_override = static_cast<MemoryLayout>(root.memory_layout_override());
  return graph;
}

}  // namespace vkc::serializer::detail
