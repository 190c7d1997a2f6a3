// The one exception type of the serializer layer.
#pragma once

#include <stdexcept>

namespace vkc::serializer {

/// Malformed input or an I/O failure while writing or reading a format.
/// The message is one line naming what is wrong.
struct SerializeError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace vkc::serializer
