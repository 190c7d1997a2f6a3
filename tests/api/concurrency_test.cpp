// Compiles share no state: many threads at once give the same bytes as one.
#include <gtest/gtest.h>

#include <thread>

#include "api_test_support.h"

namespace vkc::test {
namespace {

TEST(ApiConcurrency, EightThreadsCompilingTheExampleGiveIdenticalBytes) {
  const CompileResult reference = compile(kExampleModel, example_options());
  ASSERT_TRUE(reference) << describe(reference.diagnostics);
  const std::vector<uint8_t> model = read_file(kExampleModel);

  // Each thread runs every entry point (file -> file, file -> bytes, bytes -> bytes) a few
  // times, so that the compiles overlap even though one takes only milliseconds.
  constexpr int kThreads = 8, kRounds = 4;
  TempDir dir;
  std::vector<std::vector<std::vector<uint8_t>>> outputs(kThreads);
  std::vector<std::string> errors(kThreads);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      const fs::path out = dir / ("m" + std::to_string(i) + ".pte");
      for (int round = 0; round < kRounds; ++round) {
        const CompileResult r = round % 3 == 0   ? compile(kExampleModel, out, example_options())
                                : round % 3 == 1 ? compile(kExampleModel, example_options())
                                                 : compile(model, {}, example_options());
        if (!r) errors[i] += describe(r.diagnostics);
        outputs[i].push_back(round % 3 == 0 ? read_file(out) : r.pte);
      }
    });
  }
  for (auto& t : threads) t.join();
  for (int i = 0; i < kThreads; ++i) {
    EXPECT_TRUE(errors[i].empty()) << "thread " << i << ": " << errors[i];
    for (size_t round = 0; round < outputs[i].size(); ++round)
      EXPECT_EQ(outputs[i][round], reference.pte) << "thread " << i << " round " << round;
  }
}

}  // namespace
}  // namespace vkc::test
