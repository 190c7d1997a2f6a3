// compile_file end to end, then read back through the serializer's readers.
#include <gtest/gtest.h>

#include <cstring>
#include <set>

#include "onnx_test_models.h"
#include "vkc/compiler/driver.h"
#include "vkc/compiler/inspect.h"
#include "vkc/compiler/onnx_importer.h"
#include "vkc/passes/pipeline.h"
#include "vkc/serializer/io_names.h"
#include "vkc/serializer/pte_reader.h"
#include "vkc/serializer/sha256.h"
#include "vkc/serializer/vk_payload.h"

namespace vkc::test {
namespace {

const fs::path kExample = fs::path(VKC_SOURCE_DIR) / "examples/models/tiny_cnn.onnx";

compiler::CompileConfig example_config() {
  compiler::CompileConfig c;
  c.input_shapes["image"] = {1, 3, 32, 32};
  return c;
}

serializer::VkGraph read_only_delegate(const serializer::PteFile& f) {
  EXPECT_EQ(f.program.plans.size(), 1u);
  EXPECT_EQ(f.program.plans[0].delegates.size(), 1u);
  return serializer::read_vk_payload(f.program.plans[0].delegates[0].processed.bytes()).graph;
}

TEST(Driver, CompiledProgramReadsBackAsTheSameGraph) {
  TempDir dir;
  const fs::path out = dir / "m.pte";
  compiler::CompileStats stats = compiler::compile_file(kExample, out, example_config());
  const serializer::PteFile f = serializer::read_pte(out);
  const serializer::VkGraph vk = read_only_delegate(f);

  // Same operators in the same order as the partitioned IR.
  const auto& nodes = stats.partition.delegates.at(0).nodes;
  ASSERT_EQ(vk.chain.size(), nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) EXPECT_EQ(vk.chain[i].name, nodes[i]->op_type()) << i;

  // The plan: one input and one output, both planned, one DelegateCall with inputs then outputs.
  const auto& plan = f.program.plans[0];
  ASSERT_EQ(plan.instructions.size(), 1u);
  const auto& call = std::get<serializer::DelegateCall>(plan.instructions[0]);
  EXPECT_EQ(call.args, (std::vector<int32_t>{plan.inputs[0], plan.outputs[0]}));
  const auto& in = std::get<serializer::EtTensor>(plan.values[plan.inputs[0]]);
  EXPECT_EQ(in.sizes, (std::vector<int32_t>{1, 3, 32, 32}));
  ASSERT_TRUE(in.allocation.has_value());
  EXPECT_EQ(plan.non_const_buffer_sizes.size(), 2u);

  // Input/output tensors of the payload have the model's shapes.
  const auto& vin = std::get<serializer::VkTensor>(vk.values.at(vk.input_ids.at(0)));
  EXPECT_EQ(vin.dims, (std::vector<uint32_t>{1, 3, 32, 32}));
  const auto& vout = std::get<serializer::VkTensor>(vk.values.at(vk.output_ids.at(0)));
  EXPECT_EQ(vout.dims, (std::vector<uint32_t>{1, 10}));

  // Every constant is named data keyed by the SHA-256 of its bytes; beside them, the I/O names.
  std::set<std::string> keys;
  for (const auto& nd : f.program.named_data) {
    if (nd.key == serializer::kIoNamesKey) {
      const auto names = serializer::decode_io_names(nd.data.bytes());
      ASSERT_TRUE(names);
      EXPECT_EQ(names->inputs, std::vector<std::string>{"image"});
      EXPECT_EQ(names->outputs, std::vector<std::string>{"probs"});
      continue;
    }
    EXPECT_EQ(serializer::sha256_hex(nd.data.bytes()), nd.key);
    keys.insert(nd.key);
  }
  for (const auto& c : vk.constants) {
    EXPECT_EQ(c.offset, UINT64_MAX);
    EXPECT_TRUE(keys.count(c.named_key)) << c.named_key;
  }
}

// Megabytes of weights held in the model (raw_data): their keys are hashed beside the write, half
// on a second thread; every key is still the SHA-256 of its constant's bytes, which are the
// model's values.
TEST(Driver, MegabytesOfEmbeddedWeightsAreKeyedByTheirHashes) {
  TempDir dir;
  constexpr int64_t kN = 256 * 1024;  // 1 MiB of fp32 per constant
  ModelBuilder m;
  m.input("x", kF32, {1, kN});
  std::string prev = "x";
  std::vector<std::vector<float>> values(4, std::vector<float>(kN));
  for (int i = 0; i < 4; ++i) {
    for (int64_t k = 0; k < kN; ++k) values[i][k] = static_cast<float>(i + 1) + 1e-3f * static_cast<float>(k % 977);
    m.raw_floats("c" + std::to_string(i), {1, kN}, values[i]);
    m.node(i % 2 ? "Mul" : "Add", {prev, "c" + std::to_string(i)}, {"y" + std::to_string(i)});
    prev = "y" + std::to_string(i);
  }
  m.output(prev, kF32, {1, kN});
  write_file(dir / "m.onnx", m.bytes());
  compiler::compile_file(dir / "m.onnx", dir / "m.pte", compiler::CompileConfig{});
  const serializer::PteFile f = serializer::read_pte(dir / "m.pte");
  std::set<std::vector<float>> found;
  for (const auto& nd : f.program.named_data) {
    if (nd.key == serializer::kIoNamesKey) continue;
    EXPECT_EQ(serializer::sha256_hex(nd.data.bytes()), nd.key);
    const auto bytes = nd.data.bytes();
    std::vector<float> v(bytes.size() / sizeof(float));
    std::memcpy(v.data(), bytes.data(), v.size() * sizeof(float));
    found.insert(v);
  }
  EXPECT_EQ(found, std::set<std::vector<float>>(values.begin(), values.end()));
}

TEST(Driver, CompileOptionsTravelInThePayloadExactly) {
  TempDir dir;
  compiler::CompileConfig c = example_config();
  c.options.small_texture_limits = true;
  c.options.skip_memory_planning = true;
  c.options.force_fp16 = true;
  c.options.texture_limits = serializer::TextureLimits{4096, 4096, 1024};
  compiler::compile_file(kExample, dir / "m.pte", c);
  const auto f = serializer::read_pte(dir / "m.pte");
  const auto& specs = f.program.plans[0].delegates[0].compile_specs;
  EXPECT_EQ(serializer::CompileOptions::from_specs(specs), c.options);
  EXPECT_EQ(specs, c.options.to_specs());
}

TEST(Driver, SkipMemoryPlanningIsRecordedAndTakesEffect) {
  TempDir dir;
  compiler::compile_file(kExample, dir / "planned.pte", example_config());
  compiler::CompileConfig skip = example_config();
  skip.options.skip_memory_planning = true;
  compiler::compile_file(kExample, dir / "unplanned.pte", skip);

  auto mem_ids = [](const serializer::VkGraph& g) {
    std::multiset<int32_t> ids;
    for (const auto& v : g.values)
      if (const auto* t = std::get_if<serializer::VkTensor>(&v); t && t->constant_id < 0) ids.insert(t->mem_obj_id);
    return ids;
  };
  const auto planned = mem_ids(read_only_delegate(serializer::read_pte(dir / "planned.pte")));
  const auto unplanned = mem_ids(read_only_delegate(serializer::read_pte(dir / "unplanned.pte")));
  EXPECT_EQ(unplanned.count(-1), unplanned.size());
  // Planned: fewer memory objects than tensors, all tensors but prepacked constants share.
  std::set<int32_t> objects(planned.begin(), planned.end());
  objects.erase(-1);
  EXPECT_GT(objects.size(), 1u);
  EXPECT_LT(objects.size(), planned.size() / 2);

  auto report = compiler::inspect_file(dir / "unplanned.pte");
  EXPECT_EQ(report.delegates.at(0).options.skip_memory_planning, std::optional<bool>(true));
  EXPECT_EQ(report.delegates.at(0).memory_objects, 0u);
}

TEST(Driver, ForceFp16StoresHalfTensorsAndHalfConstantsWithF32Staging) {
  TempDir dir;
  const auto fp32 = compiler::compile_file(kExample, dir / "fp32.pte", example_config());
  compiler::CompileConfig c = example_config();
  c.options.force_fp16 = true;
  compiler::compile_file(kExample, dir / "fp16.pte", c);
  const auto f32_file = serializer::read_pte(dir / "fp32.pte");
  const auto f16_file = serializer::read_pte(dir / "fp16.pte");
  uint64_t bytes32 = 0, bytes16 = 0;
  for (const auto& nd : f32_file.program.named_data) bytes32 += nd.key == serializer::kIoNamesKey ? 0 : nd.data.size();
  for (const auto& nd : f16_file.program.named_data) bytes16 += nd.key == serializer::kIoNamesKey ? 0 : nd.data.size();
  EXPECT_EQ(bytes16 * 2, bytes32);
  const serializer::VkGraph vk = read_only_delegate(f16_file);
  const auto& in = std::get<serializer::VkTensor>(vk.values.at(vk.input_ids.at(0)));
  EXPECT_EQ(in.dtype, serializer::VkDataType::Float16);
  EXPECT_EQ(in.staging, serializer::VkDataType::Float32);
}

fs::path wide_pool_model(const TempDir& dir) {
  ModelBuilder m;
  m.input("x", kF32, {1, 4, 4, 4096});
  m.output("y", kF32, {1, 4, 4, 4096});
  auto* pool = m.node("MaxPool", {"x"}, {"y"}, "wide_pool");
  attr_ints(pool, "kernel_shape", {1, 1});
  return m.save(dir / "wide.onnx");
}

TEST(Driver, SmallTextureLimitsRejectWhatTheDefaultAccepts) {
  TempDir dir;
  const fs::path model = wide_pool_model(dir);
  EXPECT_NO_THROW(compiler::compile_file(model, dir / "default.pte", {}));
  compiler::CompileConfig small;
  small.options.small_texture_limits = true;
  try {
    compiler::compile_file(model, dir / "small.pte", small);
    FAIL() << "expected CompileError";
  } catch (const compiler::CompileError& e) {
    EXPECT_NE(std::string(e.what()).find("node 'wide_pool'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("texture extent x=4096 > 2048 (small-texture)"), std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(fs::exists(dir / "small.pte"));
  // Explicit limits win over --small-texture-limits.
  compiler::CompileConfig explicit_limits = small;
  explicit_limits.options.texture_limits = serializer::TextureLimits{8192, 8192, 2048};
  EXPECT_NO_THROW(compiler::compile_file(model, dir / "explicit.pte", explicit_limits));
}

TEST(Driver, LimitsForFollowsThePrecedence) {
  serializer::CompileOptions o;
  EXPECT_EQ(compiler::limits_for(o).texture, (std::array<uint32_t, 3>{16384, 16384, 2048}));
  o.small_texture_limits = true;
  EXPECT_EQ(compiler::limits_for(o).texture, (std::array<uint32_t, 3>{2048, 2048, 2048}));
  o.texture_limits = serializer::TextureLimits{1, 2, 3};
  EXPECT_EQ(compiler::limits_for(o).texture, (std::array<uint32_t, 3>{1, 2, 3}));
}

}  // namespace
}  // namespace vkc::test
