// The serializer's byte progress: reports go to the installed sink only, about every 32 MiB and
// once at the end, never past the total, and counts from several threads add up.
#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "vkc/serializer/byte_progress.h"

namespace vkc::serializer {
namespace {

constexpr uint64_t kMiB = uint64_t{1} << 20;

TEST(ByteProgress, ReportsStepsAndTheEndToTheInstalledSinkOnly) {
  std::vector<std::pair<uint64_t, uint64_t>> seen;
  {
    detail::ByteCounter none(100 * kMiB);
    none.add(100 * kMiB);  // no sink: nothing to see, nothing fails
  }
  {
    ByteProgressScope scope([&](uint64_t done, uint64_t total) { seen.emplace_back(done, total); });
    detail::ByteCounter c(100 * kMiB);
    for (int i = 0; i < 100; ++i) c.add(kMiB);
  }
  ASSERT_EQ(seen.size(), 4u);  // 32, 64, 96 MiB, then the end
  EXPECT_EQ(seen[0], std::make_pair(32 * kMiB, 100 * kMiB));
  EXPECT_EQ(seen[2], std::make_pair(96 * kMiB, 100 * kMiB));
  EXPECT_EQ(seen[3], std::make_pair(100 * kMiB, 100 * kMiB));
  seen.clear();
  {
    detail::ByteCounter after(64 * kMiB);  // the scope has ended
    after.add(64 * kMiB);
  }
  EXPECT_TRUE(seen.empty());
}

TEST(ByteProgress, CountsFromSeveralThreadsAddUp) {
  uint64_t last = 0, calls = 0;
  {
    ByteProgressScope scope([&](uint64_t done, uint64_t total) {
      EXPECT_LE(done, total);
      EXPECT_GE(done, last);
      last = done;
      ++calls;
    });
    detail::ByteCounter c(4 * 256 * kMiB);
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
      threads.emplace_back([&] {
        for (int i = 0; i < 256; ++i) c.add(kMiB);
      });
    for (auto& t : threads) t.join();
  }
  EXPECT_EQ(last, 4 * 256 * kMiB);
  EXPECT_GE(calls, 32u);
}

}  // namespace
}  // namespace vkc::serializer
