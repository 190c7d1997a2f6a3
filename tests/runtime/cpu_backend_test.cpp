// The cpu backend on hand-written VkGraphs: argument decoding, dtype staging, the memory-plan
// check and its one-line errors.
#include <gtest/gtest.h>

#include "common/error_of.h"
#include "graph_builder.h"
#include "test_util.h"
#include "vkc/ir/op_registry.h"
#include "vkc/runtime/executor.h"

namespace vkc::test {
namespace {

using kernels::HostTensor;
using runtime::Executor;
using runtime::RuntimeError;

std::vector<HostTensor> run(VkProgramBuilder& b, const std::vector<HostTensor>& inputs) {
  auto backend = runtime::make_backend("cpu");
  Executor e = Executor::from_pte(b.build(), *backend);
  return e.run(inputs);
}

// The message of the RuntimeError `fn` throws ("" when it does not).
template <typename Fn>
std::string error_of(Fn&& fn) {
  return vkc::testing::error_of<RuntimeError>(std::forward<Fn>(fn), "");
}

TEST(CpuBackend, AddWithAlphaBroadcastsAConstant) {
  VkProgramBuilder b;
  const int x = b.tensor({2, 2}), c = b.constant({2}, {10, 20}), out = b.tensor({2, 2});
  b.call("aten.add.Tensor", {x, c, b.value(int64_t{2}), out});
  b.input(x);
  b.output(out);
  const auto r = run(b, {f32({2, 2}, {1, 2, 3, 4})});
  EXPECT_THAT(values(r.at(0)), near({21, 42, 23, 44}));
}

TEST(CpuBackend, StagesInt64AsInt32) {
  VkProgramBuilder b;
  const int x = b.tensor({2, 2}, VkDataType::Int32), out = b.tensor({4}, VkDataType::Int32);
  b.call("aten.view_copy.default", {x, b.value(VkIntList{{-1}}), out});
  b.input(x, ScalarType::Long);
  b.output(out, ScalarType::Long);
  const auto r = run(b, {HostTensor::of(ir::DType::Int64, {2, 2}, std::vector<int64_t>{1, -2, 3, 1 << 20})});
  EXPECT_EQ(r.at(0).dtype, ir::DType::Int64);
  EXPECT_EQ(r.at(0).ints(), (std::vector<int64_t>{1, -2, 3, 1 << 20}));
}

TEST(CpuBackend, Fp16TensorsRoundWhereStored) {
  // force_fp16: GPU tensors are FLOAT16, staging stays f32.
  VkProgramBuilder b;
  const int x = b.tensor({1}, VkDataType::Float16), y = b.tensor({1}, VkDataType::Float16);
  b.call("aten.add.Tensor", {x, x, b.value(int64_t{1}), y});
  b.input(x);
  b.output(y);
  const auto r = run(b, {f32({1}, {0.1f})});
  EXPECT_EQ(r.at(0).dtype, ir::DType::Float32);
  EXPECT_EQ(r.at(0).get_f(0), 0.199951171875);  // 2 * fp16(0.1), exactly
}

TEST(CpuBackend, MultiOutputOpsWriteAValueList) {
  VkProgramBuilder b;
  const int x = b.tensor({1, 1, 2, 2}), v = b.tensor({1, 1, 1, 1}), i = b.tensor({1, 1, 1, 1}, VkDataType::Int32);
  const int k = b.value(VkIntList{{2, 2}}), s = b.value(VkIntList{{}}), p = b.value(VkIntList{{0, 0}}),
            d = b.value(VkIntList{{1, 1}});
  b.call("aten.max_pool2d_with_indices.default", {x, k, s, p, d, b.value(false), b.value(VkValueList{{v, i}})});
  b.input(x);
  b.output(v);
  EXPECT_THAT(values(run(b, {f32({1, 1, 2, 2}, {1, 7, 3, 4})}).at(0)), near({7}));
}

TEST(CpuBackend, SelectExpandRepeatDecodeTheirLists) {
  VkProgramBuilder b;
  const int x = b.tensor({2, 1}), sel = b.tensor({1}), exp = b.tensor({2, 2, 3}), rep = b.tensor({1, 4, 2});
  b.call("aten.select_copy.int", {x, b.value(int64_t{0}), b.value(int64_t{-1}), sel});
  b.call("aten.expand_copy.default", {x, b.value(VkIntList{{2, -1, 3}}), b.value(false), exp});
  b.call("aten.repeat.default", {x, b.value(VkIntList{{1, 2, 2}}), rep});
  b.input(x);
  b.output(sel);
  b.output(exp);
  b.output(rep);
  const auto r = run(b, {f32({2, 1}, {5, 6})});
  EXPECT_THAT(values(r.at(0)), near({6}));
  EXPECT_THAT(values(r.at(1)), near({5, 5, 5, 6, 6, 6, 5, 5, 5, 6, 6, 6}));
  EXPECT_THAT(values(r.at(2)), near({5, 5, 6, 6, 5, 5, 6, 6}));
}

TEST(CpuBackend, ComparisonsStoreInTheOutputDtype) {
  VkProgramBuilder b;
  const int x = b.tensor({3}), c = b.constant({1}, {2}), m = b.tensor({3}, VkDataType::Bool), out = b.tensor({3});
  b.call("aten.lt.Tensor", {x, c, m});
  b.call("aten.where.self", {m, x, c, out});
  b.input(x);
  b.output(out);
  EXPECT_THAT(values(run(b, {f32({3}, {1, 2, 3})}).at(0)), near({1, 2, 2}));
}

TEST(CpuBackend, WrongArgumentKindNamesNodeAndOp) {
  VkProgramBuilder b;
  const int x = b.tensor({3}), out = b.tensor({3});
  b.call("aten._softmax.default", {x, b.value(0.5), b.value(false), out});
  b.input(x);
  b.output(out);
  const std::string e = error_of([&] { run(b, {f32({3}, {1, 2, 3})}); });
  EXPECT_NE(e.find("node 0 (aten._softmax.default)"), std::string::npos) << e;
  EXPECT_NE(e.find("argument 1 is Double, expected an Int or SymInt"), std::string::npos) << e;
}

TEST(CpuBackend, LoadRejectsUnknownOpsAndWrongArity) {
  VkProgramBuilder b;
  const int x = b.tensor({3}), out = b.tensor({3});
  b.call("aten.not_an_op.default", {x, out});
  b.input(x);
  b.output(out);
  auto backend = runtime::make_backend("cpu");
  EXPECT_NE(error_of([&] { Executor::from_pte(b.build(), *backend); }).find("node 0: operator aten.not_an_op.default has no CPU kernel"),
            std::string::npos);
  VkProgramBuilder c;
  const int y = c.tensor({3}), o2 = c.tensor({3});
  c.call("aten.relu.default", {y, y, o2});
  c.input(y);
  c.output(o2);
  EXPECT_NE(error_of([&] { Executor::from_pte(c.build(), *backend); }).find("3 args, the schema has 1 plus the output"),
            std::string::npos);
}

TEST(CpuBackend, ReadAfterTheMemoryPlanReusedAnObjectIsAnError) {
  VkProgramBuilder b;
  const int x = b.tensor({2}), t1 = b.tensor({2}, VkDataType::Float32, 0), t2 = b.tensor({2}, VkDataType::Float32, 0);
  const int out = b.tensor({2});
  b.call("aten.relu.default", {x, t1});
  b.call("aten.neg.default", {x, t2});  // overwrites mem_obj 0 while t1 is still needed
  b.call("aten.mul.Tensor", {t1, t2, out});
  b.input(x);
  b.output(out);
  const std::string e = error_of([&] { run(b, {f32({2}, {1, 2})}); });
  EXPECT_NE(e.find("node 2 (aten.mul.Tensor): memory plan: value 1 shares mem_obj 0 with value 2"), std::string::npos) << e;
}

TEST(CpuBackend, ComputedShapeMustMatchTheDeclaredOne) {
  VkProgramBuilder b;
  const int x = b.tensor({2, 3}), out = b.tensor({2, 3});
  b.call("aten.permute_copy.default", {x, b.value(VkIntList{{1, 0}}), out});
  b.input(x);
  b.output(out);
  const std::string e = error_of([&] { run(b, {f32({2, 3}, {1, 2, 3, 4, 5, 6})}); });
  EXPECT_NE(e.find("computed shape [3,2] but value 1 is declared [2,3]"), std::string::npos) << e;
}

TEST(CpuBackend, InputsMustMatchThePlan) {
  VkProgramBuilder b;
  const int x = b.tensor({2}), out = b.tensor({2});
  b.call("aten.relu.default", {x, out});
  b.input(x);
  b.output(out);
  EXPECT_NE(error_of([&] { run(b, {f32({3}, {1, 2, 3})}); }).find("input 0: expected f32 [2], got f32 [3]"),
            std::string::npos);
}

// A KernelCall names an ExecuTorch portable kernel; one without a CPU kernel fails at load.
TEST(CpuBackend, KernelCallsWithoutACpuKernelFailAtLoad) {
  VkProgramBuilder b;
  const int x = b.tensor({1}), out = b.tensor({1});
  b.call("aten.relu.default", {x, out});
  b.input(x);
  b.output(out);
  PteFile f = b.build();
  f.program.plans[0].operators.push_back({"aten::frobnicate", "out"});
  f.program.plans[0].instructions.push_back(KernelCall{0, {0, 1}});
  auto backend = runtime::make_backend("cpu");
  const std::string e = error_of([&] { Executor::from_pte(std::move(f), *backend); });
  EXPECT_NE(e.find("KernelCall: operator aten::frobnicate.out has no CPU kernel"), std::string::npos) << e;
}

TEST(CpuBackend, CoversEveryRegistryOperator) {
  const auto ops = runtime::cpu_operators();
  for (const auto& def : ir::all_ops())
    EXPECT_TRUE(std::binary_search(ops.begin(), ops.end(), def.name())) << def.name() << " has no CPU kernel";
}

TEST(Backends, UnknownBackendIsAnError) {
  EXPECT_THROW(runtime::make_backend("tpu"), RuntimeError);
}

}  // namespace
}  // namespace vkc::test
