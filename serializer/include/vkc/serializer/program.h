// A plain C++ description of an ExecuTorch Program (schema/program.fbs) as vkc
// writes it: segment layout, headers and flatbuffer details are left to the
// writer (pte_writer.h) and reader (pte_reader.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "vkc/ir/tensor_data.h"
#include "vkc/serializer/compile_options.h"

namespace vkc::serializer {

enum class ScalarType : int8_t {
  Byte = 0, Char = 1, Short = 2, Int = 3, Long = 4, Half = 5, Float = 6, Double = 7, Bool = 11,
  BFloat16 = 15,
};

enum class ShapeDynamism : int8_t { Static = 0, DynamicBound = 1, DynamicUnbound = 2 };

/// A planned tensor: arena `memory_id` (1-based) at byte `offset`.
struct AllocationInfo {
  uint32_t memory_id = 1;
  uint64_t offset = 0;
};

struct EtTensor {
  ScalarType scalar_type = ScalarType::Float;
  std::vector<int32_t> sizes;
  std::vector<uint8_t> dim_order;  // empty: written as 0..rank-1
  uint32_t data_buffer_idx = 0;    // > 0: Program::constants[idx - 1]
  std::optional<AllocationInfo> allocation;
  ShapeDynamism dynamism = ShapeDynamism::Static;
};

struct EtNull {};
struct EtIntList { std::vector<int64_t> items; };
struct EtDoubleList { std::vector<double> items; };
struct EtBoolList { std::vector<bool> items; };
struct EtTensorList { std::vector<int32_t> items; };          // value indices
struct EtOptionalTensorList { std::vector<int32_t> items; };  // value indices

/// Alternative order = KernelTypes union order (tag = index + 1).
using EtValue = std::variant<EtNull, int64_t, bool, double, EtTensor, std::string, EtIntList,
                             EtDoubleList, EtBoolList, EtTensorList, EtOptionalTensorList>;

struct KernelCall { int32_t op_index = 0; std::vector<int32_t> args; };
struct DelegateCall { int32_t delegate_index = 0; std::vector<int32_t> args; };
struct MoveCall { int32_t from = 0, to = 0; };
struct JumpFalseCall { int32_t cond = 0, destination = 0; };
struct FreeCall { int32_t value = 0; };

/// Alternative order = InstructionArguments union order (tag = index + 1).
using Instruction = std::variant<KernelCall, DelegateCall, MoveCall, JumpFalseCall, FreeCall>;

struct Operator { std::string name, overload; };

struct BackendDelegate {
  std::string id;            // e.g. "VulkanBackend"
  ir::TensorData processed;  // the payload; stored as its own segment
  std::vector<CompileSpec> compile_specs;
};

struct ExecutionPlan {
  std::string name;
  std::vector<EtValue> values;
  std::vector<int32_t> inputs, outputs;
  std::vector<Instruction> instructions;  // one chain
  std::vector<Operator> operators;
  std::vector<BackendDelegate> delegates;
  std::vector<int64_t> non_const_buffer_sizes;  // entry 0 reserved
};

struct NamedData {
  std::string key;
  ir::TensorData data;
  /// `key` is a placeholder (kDeferredKeyPrefix, as long as the SHA-256 hex key it stands for) that
  /// the writers replace by the key, hashing the bytes as they write them (build_vk_graph's
  /// defer_keys_from). Only the compiler sets it: a key read from a file is always itself.
  bool deferred = false;
};

inline constexpr std::string_view kDeferredKeyPrefix = "vkc-deferred:";

struct Program {
  std::vector<ExecutionPlan> plans;
  std::vector<NamedData> named_data;
  /// Constant-segment tensors; EtTensor::data_buffer_idx = index + 1 (0 is reserved).
  std::vector<ir::TensorData> constants;
};

}  // namespace vkc::serializer
