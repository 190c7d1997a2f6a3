#include "plan_builder.h"

#include <fmt/format.h>

#include "vkc/serializer/errors.h"

namespace vkc::serializer::detail {
namespace {
constexpr uint64_t kTensorAlignment = 16;
}  // namespace

ScalarType scalar_type(const ir::Value* v) {
  switch (v->dtype()) {
    case ir::DType::Bool: return ScalarType::Bool;
    case ir::DType::UInt8: return ScalarType::Byte;
    case ir::DType::Int8: return ScalarType::Char;
    case ir::DType::Int16: return ScalarType::Short;
    case ir::DType::Int32: return ScalarType::Int;
    case ir::DType::Int64: return ScalarType::Long;
    case ir::DType::Float16: return ScalarType::Half;
    case ir::DType::Float32: return ScalarType::Float;
    case ir::DType::Float64: return ScalarType::Double;
    case ir::DType::BFloat16: return ScalarType::BFloat16;
    default:
      throw SerializeError(fmt::format("tensor '{}' has dtype {}, which ExecuTorch cannot hold", v->name(),
                                       ir::dtype_name(v->dtype())));
  }
}

int32_t PlanBuilder::push(EtValue v) {
  plan_.values.push_back(std::move(v));
  return static_cast<int32_t>(plan_.values.size() - 1);
}

int32_t PlanBuilder::tensor(const ir::Value* v) {
  if (auto it = ids_.find(v); it != ids_.end()) return it->second;
  if (!v->shape().is_static()) throw SerializeError(fmt::format("tensor '{}' has no static shape", v->name()));
  EtTensor t;
  t.scalar_type = scalar_type(v);
  for (int64_t s : v->shape().sizes()) t.sizes.push_back(static_cast<int32_t>(s));
  if (v->is_constant()) {
    program_.constants.push_back(v->data());
    t.data_buffer_idx = static_cast<uint32_t>(program_.constants.size());  // 0 is reserved
  } else {
    t.allocation = AllocationInfo{1, arena_};
    arena_ += (static_cast<uint64_t>(v->type().nbytes()) + kTensorAlignment - 1) / kTensorAlignment * kTensorAlignment;
  }
  return ids_[v] = push(std::move(t));
}

int32_t PlanBuilder::bounded_tensor(const ir::Value* v, const std::vector<int64_t>& bound) {
  EtTensor t;
  t.scalar_type = scalar_type(v);
  int64_t numel = 1;
  for (int64_t s : bound) {
    t.sizes.push_back(static_cast<int32_t>(s));
    numel *= s;
  }
  if (!v->shape().is_static() || v->shape().sizes() != bound) t.dynamism = ShapeDynamism::DynamicBound;
  t.allocation = AllocationInfo{1, arena_};
  const uint64_t nbytes = static_cast<uint64_t>(numel) * ir::dtype_size(v->dtype());
  arena_ += (nbytes + kTensorAlignment - 1) / kTensorAlignment * kTensorAlignment;
  return push(std::move(t));
}

int32_t PlanBuilder::scalar(const ir::Attribute& a, ir::ArgKind kind) {
  if (std::holds_alternative<std::monostate>(a)) return push(EtNull{});
  switch (kind) {
    case ir::ArgKind::Int: return push(std::get<int64_t>(a));
    case ir::ArgKind::Float:
      return push(std::holds_alternative<double>(a) ? std::get<double>(a) : static_cast<double>(std::get<int64_t>(a)));
    case ir::ArgKind::Scalar:
      if (std::holds_alternative<int64_t>(a)) return push(std::get<int64_t>(a));
      return push(std::get<double>(a));
    case ir::ArgKind::Bool: return push(std::get<bool>(a));
    case ir::ArgKind::IntList: return push(EtIntList{std::get<std::vector<int64_t>>(a)});
    case ir::ArgKind::FloatList: return push(EtDoubleList{std::get<std::vector<double>>(a)});
    case ir::ArgKind::BoolList: return push(EtBoolList{std::get<ir::BoolList>(a).items});
    case ir::ArgKind::String: return push(std::get<std::string>(a));
    default: return push(EtNull{});
  }
}

int32_t PlanBuilder::tensor_list(const std::vector<int32_t>& ids) { return push(EtTensorList{ids}); }

}  // namespace vkc::serializer::detail
