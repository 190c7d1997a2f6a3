// Node attributes: ONNX attributes after import, and the scalar arguments of
// lowered runtime operators (see op_schema.h).
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "vkc/ir/shape.h"
#include "vkc/ir/tensor_data.h"

namespace vkc::ir {

struct BoolList {
  std::vector<bool> items;
  bool operator==(const BoolList&) const = default;
};

/// A tensor-valued attribute (ONNX TENSOR attributes, e.g. ConstantOfShape's value).
struct TensorAttr {
  TensorType type;
  TensorData data;
  bool operator==(const TensorAttr& o) const {
    return type == o.type && data.size() == o.data.size() && std::equal(data.data(), data.data() + data.size(), o.data.data());
  }
};

/// std::monostate is "None".
using Attribute = std::variant<std::monostate, bool, int64_t, double, std::string, std::vector<int64_t>,
                               std::vector<double>, BoolList, std::vector<std::string>, TensorAttr>;

/// Ordered by name so printing and serialization are deterministic.
using AttributeMap = std::map<std::string, Attribute, std::less<>>;

/// Textual form used by the IR printer: 3, 1.5, true, [1,2], "s", None.
std::string attribute_str(const Attribute& a);

}  // namespace vkc::ir
