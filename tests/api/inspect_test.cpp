// vkc::inspect gives what `vkc inspect --json` prints, from a file or from memory.
#include <gtest/gtest.h>

#include "api_test_support.h"

namespace vkc::test {
namespace {

TEST(ApiInspect, FileAndBytesGiveTheSameReport) {
  TempDir dir;
  ASSERT_TRUE(compile(kExampleModel, dir / "m.pte", example_options()));
  const InspectResult from_file = inspect(dir / "m.pte");
  ASSERT_TRUE(from_file) << describe(from_file.diagnostics);
  const std::vector<uint8_t> bytes = read_file(dir / "m.pte");
  const InspectResult from_bytes = inspect(bytes);
  ASSERT_TRUE(from_bytes) << describe(from_bytes.diagnostics);

  EXPECT_EQ(from_file.report.path, (dir / "m.pte").string());
  EXPECT_EQ(from_bytes.report.path, "<pte bytes>");
  InspectReport renamed = from_bytes.report;
  renamed.path = from_file.report.path;
  EXPECT_EQ(compiler::inspect_json(renamed), from_file.json());

  EXPECT_EQ(from_file.report.file_size, bytes.size());
  ASSERT_FALSE(from_file.report.delegates.empty());
  for (const DelegateReport& d : from_file.report.delegates) {
    EXPECT_EQ(d.backend, "VulkanBackend");
    EXPECT_TRUE(d.called);
  }
  EXPECT_NE(from_file.text().find("VulkanBackend"), std::string::npos);
}

TEST(ApiInspect, CorruptInputIsADiagnostic) {
  std::vector<uint8_t> bytes(64, 0x5a);
  const InspectResult r = inspect(bytes);
  EXPECT_FALSE(r);
  ASSERT_EQ(r.diagnostics.size(), 1u);
  EXPECT_EQ(r.diagnostics[0].message.rfind("<pte bytes>: ", 0), 0u) << r.diagnostics[0].message;

  const InspectResult missing = inspect(fs::path("/nonexistent.pte"));
  EXPECT_FALSE(missing);
  EXPECT_NE(missing.diagnostics.at(0).message.find("/nonexistent.pte"), std::string::npos);
}

}  // namespace
}  // namespace vkc::test
