// IR + partition -> Program: VkGraph argument layouts as the runtime reads them, and
// KernelCall fallback for nodes left out of every delegate.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "common/graph_builder.h"
#include "vkc/partitioner/partition.h"
#include "vkc/serializer/build_program.h"
#include "vkc/serializer/errors.h"
#include "vkc/serializer/ptd.h"
#include "vkc/serializer/pte_writer.h"
#include "vkc/serializer/sha256.h"
#include "vkc/serializer/vk_payload.h"

namespace vkc::serializer {
namespace {
using testing::f32;
using Ints = std::vector<int64_t>;

const VkValue& arg(const VkGraph& g, const VkOperatorCall& c, size_t i) { return g.values.at(c.args.at(i)); }

TEST(BuildVkGraph, ConvolutionHasEveryArgumentThenTheOutput) {
  ir::Graph g;
  ir::Value* x = testing::input(g, "x", f32({1, 2, 4, 4}));
  ir::Node* conv = testing::runtime(g, "aten.convolution.default",
                                    {x, testing::constant(g, "w", {2, 2, 1, 1}, {1, 2, 3, 4}), nullptr},
                                    {f32({1, 2, 4, 4})},
                                    {{"stride", Ints{1, 1}}, {"padding", Ints{0, 0}}, {"dilation", Ints{1, 1}},
                                     {"transposed", false}, {"output_padding", Ints{0, 0}}, {"groups", int64_t{1}}});
  g.outputs.push_back(conv->output(0));
  auto p = partitioner::partition_graph(g, {});
  std::vector<NamedData> named;
  VkGraph vk = build_vk_graph(p.delegates[0], {}, named);
  ASSERT_EQ(vk.chain.size(), 1u);
  const VkOperatorCall& c = vk.chain[0];
  EXPECT_EQ(c.name, "aten.convolution.default");
  ASSERT_EQ(c.args.size(), 10u);
  EXPECT_EQ(std::get<VkTensor>(arg(vk, c, 1)).constant_id, 0);          // weight: a TensorRef
  EXPECT_TRUE(std::holds_alternative<VkNull>(arg(vk, c, 2)));            // no bias
  EXPECT_EQ(std::get<VkIntList>(arg(vk, c, 3)).items, (Ints{1, 1}));     // stride
  EXPECT_EQ(std::get<bool>(arg(vk, c, 6)), false);                       // transposed
  EXPECT_EQ(std::get<int64_t>(arg(vk, c, 8)), 1);                        // groups: Int
  const auto& out = std::get<VkTensor>(arg(vk, c, 9));
  EXPECT_EQ(out.storage, StorageType::Texture3D);
  EXPECT_EQ(out.layout, MemoryLayout::ChannelsPacked);
  ASSERT_EQ(named.size(), 1u);
  EXPECT_EQ(vk.constants[0].named_key, named[0].key);
  EXPECT_EQ(vk.constants[0].offset, UINT64_MAX);
}

TEST(BuildVkGraph, MultiOutputOpsWriteAValueListAndDefaultsAreFilled) {
  ir::Graph g;
  ir::Value* x = testing::input(g, "x", f32({1, 2, 4, 4}));
  ir::Node* pool = testing::runtime(g, "aten.max_pool2d_with_indices.default", {x},
                                    {f32({1, 2, 2, 2}), {ir::DType::Int64, ir::Shape::of({1, 2, 2, 2})}},
                                    {{"kernel_size", Ints{2, 2}}, {"stride", Ints{2, 2}}});
  g.outputs.push_back(pool->output(0));
  auto p = partitioner::partition_graph(g, {});
  std::vector<NamedData> named;
  VkGraph vk = build_vk_graph(p.delegates[0], {}, named);
  const VkOperatorCall& c = vk.chain[0];
  ASSERT_EQ(c.args.size(), 7u);
  EXPECT_EQ(std::get<VkIntList>(arg(vk, c, 3)).items, (Ints{0, 0}));  // padding default, expanded
  EXPECT_EQ(std::get<VkIntList>(arg(vk, c, 4)).items, (Ints{1, 1}));  // dilation default
  EXPECT_EQ(std::get<bool>(arg(vk, c, 5)), false);                    // ceil_mode default
  const auto& outs = std::get<VkValueList>(arg(vk, c, 6)).items;
  ASSERT_EQ(outs.size(), 2u);
  EXPECT_EQ(std::get<VkTensor>(vk.values.at(outs[1])).dtype, VkDataType::Int32);  // i64 downcast
}

// relu -> avg_pool (too wide for small textures) -> relu
ir::Node* wide_chain(ir::Graph& g) {
  ir::Value* x = testing::input(g, "x", f32({1, 4, 4, 4000}));
  ir::Node* r1 = testing::runtime(g, "aten.relu.default", {x}, {x->type()});
  ir::Node* pool = testing::runtime(g, "aten.avg_pool2d.default", {r1->output(0)}, {x->type()},
                                    {{"kernel_size", Ints{1, 1}}, {"stride", Ints{1, 1}}, {"padding", Ints{0, 0}}});
  ir::Node* r2 = testing::runtime(g, "aten.relu.default", {pool->output(0)}, {x->type()});
  g.outputs.push_back(r2->output(0));
  return pool;
}

// Four linears over [64, 4096] weights (1 MiB each): a, a again, b, and a with one value changed
// between the places its fingerprint samples (the same fingerprint as a, other bytes).
void four_linears(ir::Graph& g) {
  ir::Value* x = testing::input(g, "x", f32({1, 4096}));
  std::vector<float> a(64 * 4096), b(64 * 4096);
  for (size_t i = 0; i < a.size(); ++i) a[i] = float(i % 977) * 0.001f, b[i] = float(i % 613) * -0.002f;
  std::vector<float> a2 = a;
  a2[19456] = 123.f;  // byte 77824: past the sample at 69632 (4 KiB), before the next at 139264
  const std::vector<float>* weights[] = {&a, &a, &b, &a2};
  ir::Value* y = x;
  for (int k = 0; k < 4; ++k) {
    ir::Value* w = testing::constant(g, "w" + std::to_string(k), {64, 4096}, *weights[k]);
    ir::Node* lin = testing::runtime(g, "aten.linear.default", {x, w, nullptr}, {f32({1, 64})});
    y = lin->output(0);
    g.outputs.push_back(y);
  }
}

std::vector<uint8_t> file_bytes(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), {}};
}

// The four linears' program, built with keys hashed (defer 0) or deferred, and a temporary folder.
struct DeferredCase {
  ir::Graph g;
  partitioner::Partition p;
  std::filesystem::path dir;
  explicit DeferredCase(const std::string& name) {
    four_linears(g);
    p = partitioner::partition_graph(g, {});
    dir = std::filesystem::temp_directory_path() / (name + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
  }
  ~DeferredCase() { std::filesystem::remove_all(dir); }
  Program build(uint64_t defer_keys_from) const { return build_program(g, p, {}, false, nullptr, defer_keys_from); }
};

TEST(BuildProgram, DeferredKeysGiveTheSameBytesInMemoryAndInFiles) {
  // Constants of at least defer_keys_from bytes are named by placeholders the writers replace by
  // the SHA-256 of the bytes they write: the .pte (and a .ptd with its .pte) must be byte for byte
  // what hashing first gives, equal constants still sharing one entry.
  DeferredCase t("vkc_deferred_");
  ASSERT_EQ(t.p.delegates.size(), 1u);
  const Program plain = t.build(0);
  Program deferred = t.build(1 << 20);
  size_t placeholders = 0;
  for (const NamedData& n : deferred.named_data) placeholders += n.deferred;
  // a, a and a' fingerprint alike: hashed here (a's two one entry, a' its own); b deferred.
  EXPECT_EQ(placeholders, 1u);
  EXPECT_EQ(deferred.named_data.size(), plain.named_data.size());
  const std::vector<uint8_t> want = serialize_pte(plain);
  EXPECT_EQ(serialize_pte(deferred), want);
  const auto& dir = t.dir;
  write_pte(deferred, dir / "d.pte");
  EXPECT_EQ(file_bytes(dir / "d.pte"), want);
  // With the constants in a .ptd (written first; the .pte then gets the keys it resolved).
  Program plain_ext = t.build(0), deferred_ext = t.build(1 << 20);
  const std::vector<uint8_t> want_ptd = serialize_ptd(take_external_data(plain_ext));
  const std::vector<uint8_t> want_pte = serialize_pte(plain_ext);
  const ResolvedKeys resolved = write_ptd(take_external_data(deferred_ext), dir / "d.ptd");
  EXPECT_EQ(resolved.size(), 1u);
  resolve_deferred_keys(deferred_ext, resolved);
  write_pte(deferred_ext, dir / "e.pte");
  EXPECT_EQ(file_bytes(dir / "d.ptd"), want_ptd);
  EXPECT_EQ(file_bytes(dir / "e.pte"), want_pte);
  Program in_memory = t.build(1 << 20);
  ResolvedKeys again;
  EXPECT_EQ(serialize_ptd(take_external_data(in_memory), &again), want_ptd);
  resolve_deferred_keys(in_memory, again);
  EXPECT_EQ(serialize_pte(in_memory), want_pte);
}

TEST(BuildProgram, DeferredKeysThatCollideAreHashedFirst) {
  // Two deferred entries whose bytes turn out equal (here a second placeholder given b's bytes):
  // the writers find the equal digests before the file is renamed into place and hash the
  // deferred constants first, which gives the bytes of the program hashed from the start (the
  // two entries one).
  DeferredCase t("vkc_collide_");
  const Program hashed = t.build(0);
  Program deferred = t.build(1 << 20);
  const auto b = std::find_if(deferred.named_data.begin(), deferred.named_data.end(),
                              [](const NamedData& n) { return n.deferred; });
  ASSERT_NE(b, deferred.named_data.end());
  const NamedData twin{std::string(kDeferredKeyPrefix) + std::string(64 - kDeferredKeyPrefix.size(), '0'), b->data, true};
  deferred.named_data.push_back(twin);
  const std::vector<uint8_t> want = serialize_pte(hashed);
  EXPECT_EQ(serialize_pte(deferred), want);
  const auto& dir = t.dir;
  write_pte(deferred, dir / "c.pte");
  EXPECT_EQ(file_bytes(dir / "c.pte"), want);
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir), {}), 1);  // no temporary left
  // The same in a .ptd.
  Program plain_ext = t.build(0);
  const std::vector<NamedData> external = take_external_data(deferred);  // the twin with them
  const ResolvedKeys keys = write_ptd(external, dir / "c.ptd");
  EXPECT_EQ(file_bytes(dir / "c.ptd"), serialize_ptd(take_external_data(plain_ext)));
  EXPECT_EQ(keys.size(), 2u);
}

TEST(BuildProgram, NodesLeftOutBecomePortableKernelCallsBetweenDelegates) {
  ir::Graph g;
  wide_chain(g);
  partitioner::PartitionOptions small;
  small.limits = partitioner::DeviceLimits::small_texture();
  auto p = partitioner::partition_graph(g, small);
  ASSERT_EQ(p.num_rejected(), 1u);
  EXPECT_THROW(build_program(g, p, {}), SerializeError);

  Program prog = build_program(g, p, {}, /*cpu_fallback=*/true);
  const ExecutionPlan& plan = prog.plans.at(0);
  ASSERT_EQ(plan.instructions.size(), 3u);
  EXPECT_TRUE(std::holds_alternative<DelegateCall>(plan.instructions[0]));
  const auto& k = std::get<KernelCall>(plan.instructions[1]);
  EXPECT_TRUE(std::holds_alternative<DelegateCall>(plan.instructions[2]));
  ASSERT_EQ(plan.operators.size(), 1u);
  EXPECT_EQ(plan.operators[0].name, "aten::avg_pool2d");
  EXPECT_EQ(plan.operators[0].overload, "out");
  // self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override, out
  ASSERT_EQ(k.args.size(), 8u);
  EXPECT_EQ(std::get<EtIntList>(plan.values.at(k.args[1])).items, (Ints{1, 1}));
  EXPECT_EQ(std::get<bool>(plan.values.at(k.args[5])), true);  // count_include_pad default
  EXPECT_TRUE(std::holds_alternative<EtNull>(plan.values.at(k.args[6])));
  // The kernel reads the first delegate's output and writes the second delegate's input.
  const auto& first = std::get<DelegateCall>(plan.instructions[0]);
  const auto& second = std::get<DelegateCall>(plan.instructions[2]);
  EXPECT_EQ(k.args[0], first.args.back());
  EXPECT_EQ(k.args[7], second.args.front());
  EXPECT_EQ(plan.delegates.size(), 2u);
}

TEST(BuildProgram, ADelegateRunsAfterTheKernelCallsItReadsFrom) {
  // a = relu(x); p = avg_pool(x) (left out); e = relu(p): a and e share a delegate, which
  // must run after the pool even though a comes first in the graph.
  ir::Graph g;
  ir::Value* x = testing::input(g, "x", f32({1, 4, 4, 4000}));
  ir::Node* a = testing::runtime(g, "aten.relu.default", {x}, {x->type()});
  ir::Node* pool = testing::runtime(g, "aten.avg_pool2d.default", {x}, {x->type()},
                                    {{"kernel_size", Ints{1, 1}}, {"stride", Ints{1, 1}}, {"padding", Ints{0, 0}}});
  ir::Node* e = testing::runtime(g, "aten.relu.default", {pool->output(0)}, {x->type()});
  g.outputs = {a->output(0), e->output(0)};
  partitioner::PartitionOptions small;
  small.limits = partitioner::DeviceLimits::small_texture();
  auto p = partitioner::partition_graph(g, small);
  ASSERT_EQ(p.delegates.size(), 1u);
  Program prog = build_program(g, p, {}, true);
  const auto& ins = prog.plans.at(0).instructions;
  ASSERT_EQ(ins.size(), 2u);
  EXPECT_TRUE(std::holds_alternative<KernelCall>(ins[0]));
  EXPECT_TRUE(std::holds_alternative<DelegateCall>(ins[1]));
}

TEST(BuildProgram, EtVkOperatorsHaveNoPortableKernel) {
  ir::Graph g;
  ir::Value* x = testing::input(g, "x", f32({1, 1, 1, 3000}));
  ir::Node* conv = testing::runtime(
      g, "et_vk.conv_with_clamp.default", {x, testing::constant(g, "w", {1, 1, 1, 1}, {2}), nullptr},
      {f32({1, 1, 1, 3000})},
      {{"stride", Ints{1, 1}}, {"padding", Ints{0, 0}}, {"dilation", Ints{1, 1}}, {"transposed", false},
       {"output_padding", Ints{0, 0}}, {"groups", int64_t{1}}, {"output_min", 0.0}, {"output_max", 6.0}});
  g.outputs.push_back(conv->output(0));
  partitioner::PartitionOptions small;
  small.limits = partitioner::DeviceLimits::small_texture();
  auto p = partitioner::partition_graph(g, small);
  try {
    build_program(g, p, {}, true);
    FAIL() << "expected SerializeError";
  } catch (const SerializeError& e) {
    EXPECT_NE(std::string(e.what()).find("has no portable CPU kernel"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace vkc::serializer

namespace vkc::serializer {
namespace {

TEST(BuildVkGraph, ZeroDimTensorsInsideADelegateAreOneElementVectorsItsBoundaryKeepsRankZero) {
  // ET-VK's broadcasting reads the last dim of each operand (it fails on two 0-d operands), so a
  // 0-d tensor inside the delegate is written as [1]; the delegate's own inputs and outputs keep
  // ExecuTorch's rank, which its runtime checks.
  ir::Graph g;
  ir::Value* x = testing::input(g, "x", testing::f32({}));
  ir::Node* add = testing::runtime(g, "aten.add.Tensor", {x, testing::constant(g, "one", {}, {1})}, {testing::f32({})});
  ir::Node* mul = testing::runtime(g, "aten.mul.Tensor", {add->output(0), add->output(0)}, {testing::f32({})});
  g.outputs.push_back(mul->output(0));
  auto p = partitioner::partition_graph(g, {});
  ASSERT_EQ(p.delegates.size(), 1u);
  std::vector<NamedData> named;
  VkGraph vk = build_vk_graph(p.delegates[0], {}, named);
  const auto dims = [&](int32_t id) { return std::get<VkTensor>(vk.values.at(id)).dims; };
  auto call = std::find_if(vk.chain.begin(), vk.chain.end(), [](const auto& c) { return c.name == "aten.add.Tensor"; });
  ASSERT_NE(call, vk.chain.end());
  EXPECT_TRUE(dims(vk.input_ids.at(0)).empty());
  EXPECT_TRUE(dims(vk.output_ids.at(0)).empty());
  EXPECT_TRUE(dims(call->args.at(0)).empty());                    // x, the delegate's input
  EXPECT_EQ(dims(call->args.back()), (std::vector<uint32_t>{1}));  // add's output, inside
}

TEST(BuildVkGraph, AConversionTheDtypeRulesMakeAnIdentityIsAClone) {
  // i64 -> i32 is int32 to int32 on the GPU: ET-VK runs a same-dtype _to_copy as a texture blit,
  // which fails on buffers; a clone runs on both. A real conversion stays a _to_copy.
  ir::Graph g;
  ir::Value* x = testing::input(g, "x", ir::TensorType{ir::DType::Int64, ir::Shape::of({5})});
  ir::Node* narrow = testing::runtime(g, "aten._to_copy.default", {x}, {ir::TensorType{ir::DType::Int32, ir::Shape::of({5})}});
  ir::Node* to_float = testing::runtime(g, "aten._to_copy.default", {narrow->output(0)}, {testing::f32({5})});
  g.outputs.push_back(to_float->output(0));
  auto p = partitioner::partition_graph(g, {});
  ASSERT_EQ(p.delegates.size(), 1u);
  std::vector<NamedData> named;
  const VkGraph vk = build_vk_graph(p.delegates[0], {}, named);
  std::vector<std::string> names;
  for (const auto& c : vk.chain) names.push_back(c.name);
  EXPECT_EQ(names, (std::vector<std::string>{"aten.clone.default", "aten._to_copy.default"}));
  EXPECT_EQ(vk.chain.at(0).args.size(), 3u);  // self, memory_format, out
}

}  // namespace
}  // namespace vkc::serializer
