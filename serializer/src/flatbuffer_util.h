// Small helpers shared by the flatbuffer encoders/decoders (internal).
#pragma once

#include <flatbuffers/flatbuffers.h>

#include <bit>
#include <cstring>
#include <span>
#include <type_traits>
#include <string>
#include <vector>

#include "vkc/serializer/errors.h"

namespace vkc::serializer::detail {

static_assert(std::endian::native == std::endian::little, "flatbuffers are little-endian; so is every vkc host");

/// Copies a flatbuffer vector of scalars (absent = empty). The verifier of
/// flatbuffers 2.0.8 checks a vector's length field for alignment but not its
/// elements, so a corrupt file can hold a misaligned int64 vector: copy bytes.
template <typename Out, typename In>
std::vector<Out> to_vector(const flatbuffers::Vector<In>* v) {
  static_assert(std::is_arithmetic_v<In>);
  if (!v) return {};
  std::vector<In> raw(v->size());
  if (!raw.empty()) std::memcpy(raw.data(), v->Data(), raw.size() * sizeof(In));
  if constexpr (std::is_same_v<Out, In>)
    return raw;
  else
    return std::vector<Out>(raw.begin(), raw.end());
}

inline std::string to_string(const flatbuffers::String* s) { return s ? s->str() : std::string(); }

/// A union member or table the format requires but the buffer lacks.
template <typename T>
const T& require(const T* p, const std::string& what) {
  if (!p) throw SerializeError(what + " is missing");
  return *p;
}

/// Checks that `buffer` has `identifier` and passes the flatbuffers verifier,
/// which makes every later access to it in-bounds.
template <typename VerifyFn>
void verify_flatbuffer(std::span<const uint8_t> buffer, const char* identifier, VerifyFn verify,
                       const std::string& what) {
  if (buffer.size() < 8) throw SerializeError(what + ": flatbuffer shorter than 8 bytes");
  if (!flatbuffers::BufferHasIdentifier(buffer.data(), identifier))
    throw SerializeError(what + ": identifier '" +
                         std::string(reinterpret_cast<const char*>(buffer.data()) + 4, 4) +
                         "' is not '" + identifier + "'");
  if (buffer.size() >= FLATBUFFERS_MAX_BUFFER_SIZE)
    throw SerializeError(what + ": flatbuffer larger than 2 GiB");
  flatbuffers::Verifier verifier(buffer.data(), buffer.size());
  if (!verify(verifier)) throw SerializeError(what + ": flatbuffer verification failed");
}

}  // namespace vkc::serializer::detail
