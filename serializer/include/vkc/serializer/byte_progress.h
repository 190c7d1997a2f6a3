// Progress of the serializer's long loops (hashing the constants, writing a file): bytes done of a
// total, reported to one process-wide sink that the caller installs for a scope (vkc compile's
// progress display). Reports come from the worker threads too; nothing is reported with no sink.
#pragma once

#include <cstdint>
#include <functional>

namespace vkc::serializer {

/// Called with the bytes done and the total of the current loop, from any thread, one call at a
/// time, about every 32 MiB and once at the end.
using ByteProgressSink = std::function<void(uint64_t done, uint64_t total)>;

/// Installs `sink` until destroyed (scopes do not nest).
class ByteProgressScope {
 public:
  explicit ByteProgressScope(ByteProgressSink sink);
  ~ByteProgressScope();
  ByteProgressScope(const ByteProgressScope&) = delete;
  ByteProgressScope& operator=(const ByteProgressScope&) = delete;
};

namespace detail {

/// One loop's count: add() from any thread.
class ByteCounter {
 public:
  explicit ByteCounter(uint64_t total);
  ~ByteCounter();  // reports the total done
  void add(uint64_t n);

 private:
  uint64_t total_;
  uint64_t done_ = 0, reported_ = 0;
};

}  // namespace detail
}  // namespace vkc::serializer
