#include "vkc/serializer/byte_progress.h"

#include <mutex>
#include <utility>

namespace vkc::serializer {
namespace {

std::mutex g_mutex;
ByteProgressSink g_sink;  // guarded by g_mutex
constexpr uint64_t kStep = uint64_t{32} << 20;

}  // namespace

ByteProgressScope::ByteProgressScope(ByteProgressSink sink) {
  std::lock_guard lock(g_mutex);
  g_sink = std::move(sink);
}

ByteProgressScope::~ByteProgressScope() {
  std::lock_guard lock(g_mutex);
  g_sink = nullptr;
}

namespace detail {

ByteCounter::ByteCounter(uint64_t total) : total_(total) {}

ByteCounter::~ByteCounter() {
  std::lock_guard lock(g_mutex);
  if (g_sink && total_ > 0 && done_ == total_ && reported_ != total_) try {
      g_sink(total_, total_);
    } catch (...) {
    }
}

void ByteCounter::add(uint64_t n) {
  std::lock_guard lock(g_mutex);
  done_ += n;
  if (!g_sink || done_ - reported_ < kStep) return;
  reported_ = done_;
  g_sink(done_, total_);
}

}  // namespace detail
}  // namespace vkc::serializer
