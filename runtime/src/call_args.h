// Strict decoding of one VkGraph operator call's arguments (every schema argument in order,
// then the output), shared by the cpu backend's OpContext and the vulkan backend's Encoder.
// Every error is one RuntimeError naming the node and operator.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "vkc/serializer/vk_graph.h"

namespace vkc::runtime {

/// "Null", "Int", "Tensor", ... for error messages.
const char* value_kind(const serializer::VkValue& v);

class CallArgs {
 public:
  /// `output_last`: the last argument is the output and not readable as an argument.
  CallArgs(const serializer::VkGraph* graph, const serializer::VkOperatorCall* call, bool output_last)
      : graph_(graph), call_(call), output_last_(output_last) {}

  /// "node N (op)"; a pseudo-call with node_id UINT32_MAX (staging) is named by its name.
  std::string where() const;
  /// Throws RuntimeError "WHERE: what".
  [[noreturn]] void fail(const std::string& what) const;

  size_t num_args() const { return call_->args.size(); }
  /// The value id of argument i (checked in range).
  int32_t id(size_t i) const;
  const serializer::VkValue& value(size_t i) const;
  bool is_null(size_t i) const;
  int64_t int_arg(size_t i) const;                   // Int or SymInt
  double float_arg(size_t i) const;                  // Double
  double scalar_arg(size_t i) const;                 // Scalar: Int or Double
  std::optional<double> opt_scalar(size_t i) const;  // Scalar?: Null, Int or Double
  std::optional<int64_t> opt_int(size_t i) const;    // int?: Null or Int
  bool bool_arg(size_t i) const;
  std::string string_arg(size_t i) const;
  // Static-int8 (q8ta) arguments, checked the same way by every backend:
  double q8_scale(size_t i) const;           // float: positive and finite (an f32)
  int64_t q8_zero_point(size_t i) const;     // int: within int8
  bool relu_activation(size_t i) const;      // str: "none" or "relu"
  std::vector<int64_t> int_list(size_t i) const;  // IntList, or a ValueList of Int/SymInt
  std::optional<std::vector<int64_t>> opt_int_list(size_t i) const;
  std::optional<std::vector<double>> opt_double_list(size_t i) const;
  std::vector<int32_t> value_list(size_t i) const;  // ValueList: raw value ids
  /// Run-time values of SymInts (set by et_vk.select_as_symint, sym_size.int and the SymInt
  /// arithmetic), by value id; int_arg and int_list read them (else a SymInt's initial value).
  void set_symints(const std::unordered_map<int32_t, int64_t>* s) { symints_ = s; }

 protected:
  int64_t symint(int32_t id, const serializer::VkSymInt& v) const;
  const serializer::VkGraph* graph_ = nullptr;
  const serializer::VkOperatorCall* call_ = nullptr;
  bool output_last_ = false;
  const std::unordered_map<int32_t, int64_t>* symints_ = nullptr;
};

}  // namespace vkc::runtime
