// The lavapipe conformance subset (in_scope_vulkan.txt): every case must compile, run on the
// vulkan backend with the validation layer on, match its expected outputs and leave the layer
// silent. Skipped only when the machine has no Vulkan device at all.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <set>

#include "case_runner.h"
#include "vkc/runtime/vulkan.h"

namespace vkc::conformance {
namespace {

const std::filesystem::path kData = "/usr/share/libonnx-testdata/data";

std::vector<std::string> vulkan_scope() {
  std::vector<std::string> out;
  std::ifstream f(std::string(VKC_SOURCE_DIR) + "/tests/conformance/in_scope_vulkan.txt");
  for (std::string line; std::getline(f, line);)
    if (!line.empty() && line[0] != '#') out.push_back(line);
  return out;
}

bool has_device() {
  static const bool has = !runtime::vulkan_device_name().empty();
  return has;
}

class VulkanScope : public ::testing::TestWithParam<std::string> {};

TEST_P(VulkanScope, PassesOnVulkan) {
  if (!has_device()) GTEST_SKIP() << "no Vulkan device (install mesa-vulkan-drivers for lavapipe)";
  setenv("VKC_VULKAN_VALIDATION", "1", 1);  // make_backend("vulkan") reads it
  const uint64_t before = runtime::vulkan_validation_messages();
  CaseOptions options;
  options.backend = "vulkan";
  const CaseResult r = run_case(kData / GetParam(), options);
  EXPECT_EQ(r.status, Status::Pass) << GetParam() << ": " << status_name(r.status) << ": " << r.detail;
  EXPECT_EQ(runtime::vulkan_validation_messages(), before) << "validation layer messages (see stderr)";
}

INSTANTIATE_TEST_SUITE_P(Conformance, VulkanScope, ::testing::ValuesIn(vulkan_scope()), [](const auto& info) {
  std::string name = info.param;
  for (char& ch : name)
    if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return name;
});

TEST(VulkanScopeList, IsASubsetOfTheCpuList) {
  std::ifstream f(std::string(VKC_SOURCE_DIR) + "/tests/conformance/in_scope.txt");
  std::set<std::string> cpu;
  for (std::string line; std::getline(f, line);) cpu.insert(line);
  EXPECT_GE(vulkan_scope().size(), 40u);
  for (const auto& c : vulkan_scope()) EXPECT_TRUE(cpu.count(c)) << c << " is not in in_scope.txt";
}

}  // namespace
}  // namespace vkc::conformance
