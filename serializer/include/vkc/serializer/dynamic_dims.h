// Bounded dynamic dims of one VulkanBackend delegate: the symbols (a dim of a delegate input,
// between a minimum and the size the payload declares) and, for every tensor dim that follows
// them, its value as an affine function of the symbols. The payload itself is ET-VK's: tensors
// declare their largest sizes and integer arguments that follow the symbols are SymInts computed
// in the chain (sym_size.int, mul, add), so ExecuTorch's runtime resizes it by propagating sizes
// through its operators. vkc's runtime reads this table (compile spec kDynamicDimsKey) instead and
// resizes every tensor of the payload at once (resized()).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "vkc/serializer/vk_graph.h"

namespace vkc::serializer {

inline constexpr const char* kDynamicDimsKey = "vkc_dynamic_dims";

struct DynamicSymbol {
  std::string name;     // the model's symbolic dim ("sequence")
  uint32_t input = 0;   // index into VkGraph::input_ids
  uint32_t dim = 0;     // the input's dim that holds the symbol's value
  int64_t min = 1, max = 1;
};

/// dims[dim] of tensor `value` = offset + sum(coeffs[k] * symbol k).
struct DynamicDim {
  uint32_t value = 0;
  uint32_t dim = 0;
  int64_t offset = 0;
  std::vector<int64_t> coeffs;
};

struct DynamicDims {
  std::vector<DynamicSymbol> symbols;
  std::vector<DynamicDim> dims;

  /// A text table, one line per symbol and per dim (compact and readable in `vkc inspect`).
  std::vector<uint8_t> encode() const;
  /// Throws SerializeError on a malformed table.
  static DynamicDims decode(std::span<const uint8_t> bytes);
  /// The symbols' values for inputs of these shapes; throws SerializeError naming the input and
  /// dim when a value lies outside [min, max] or an input has the wrong rank.
  std::vector<int64_t> symbol_values(std::span<const std::vector<int64_t>> input_shapes) const;
  /// `graph` with every listed dim evaluated at `symbols`; throws SerializeError when a value or
  /// dim is out of range, or a dim evaluates below 0 or above the declared (largest) size.
  VkGraph resized(const VkGraph& graph, std::span<const int64_t> symbols) const;
};

}  // namespace vkc::serializer
