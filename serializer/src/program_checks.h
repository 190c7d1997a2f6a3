// Consistency checks on a plain Program, shared by the writer (before
// encoding) and the reader (after decoding) (internal).
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "vkc/serializer/program.h"

namespace vkc::serializer::detail {

/// Bytes per element, or nullopt for a type vkc does not size.
std::optional<size_t> element_size(ScalarType type);

/// Byte size of a dense tensor, or nullopt if unknown or negative/overflowing.
std::optional<uint64_t> tensor_nbytes(const EtTensor& tensor);

/// Throws SerializeError("<prefix>plan '<name>' ...") for an index out of range,
/// mismatched sizes/dim_order, a constant index past `num_constants`, or a
/// planned tensor with initial data (not supported).
void check_plan(const ExecutionPlan& plan, size_t num_constants, const std::string& prefix);

}  // namespace vkc::serializer::detail
