// A model compiled for several sizes of a symbolic dim (--dim NAME=V1,V2,...): one variant per
// size (per combination over several dims), the program picking by its inputs' shapes as it runs
// (aten::sym_size.int, executorch_prim::eq.Scalar, JumpFalseCall). Expected values computed here.
#include <gmock/gmock.h>
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>

#include "onnx_test_models.h"
#include "sequence_model.h"
#include "vkc/compiler/option_parsing.h"
#include "vkc/runtime/vulkan.h"
#include "vkc/vkc.h"

namespace vkc::test {
namespace {

using ::testing::HasSubstr;

TEST(DimSizes, AProgramCompiledForSeveralSizesRunsEachAndPicksByTheInputsShape) {
  CompileOptions o;
  o.dim_sizes = {{"sequence", {3, 7}}};
  // The plan's input is dynamic-bound by the largest size; inspect reads the sizes tested.
  const auto p = dynamic_sequence_program(o, "compiled for sequence in {3, 7}: the program holds 2 variants", 7);
  ASSERT_TRUE(p.ok());
  const InspectResult& info = p.info;
  const auto& in = info.report.plans.at(0).input_shapes.at(0);
  EXPECT_EQ(in.sizes, (std::map<int64_t, std::vector<int64_t>>{{1, {3, 7}}}));
  EXPECT_THAT(info.text(), HasSubstr("input 0: [1,7,4] dynamic-bound; dim 1 takes 3, 7"));
  EXPECT_EQ(info.report.plans.at(0).delegate_calls, 2u);
  expect_runs(p.pte(), 1, 3);
  expect_runs(p.pte(), 1, 7);
  // A size between or beyond them: one clear error, on every backend.
  for (const std::string backend : {"cpu", "vulkan"}) {
    if (backend == "vulkan" && runtime::vulkan_device_name().empty()) continue;
    EXPECT_THAT(run_error(p.pte(), 1, 5, backend), HasSubstr("no variant of the program takes input 0 [1,5,4]"));
    EXPECT_THAT(run_error(p.pte(), 1, 9, backend), HasSubstr("or smaller"));
  }
}

TEST(DimSizes, SizesOfTwoDimsMakeAVariantPerCombination) {
  CompileOptions o;
  o.dim_sizes = {{"batch", {1, 2}}, {"sequence", {2, 5}}};
  const CompileResult r = compile(sequence_model(), fs::path(), o);
  ASSERT_TRUE(r.ok) << r.error();
  EXPECT_THAT(r.diagnostics.at(0).message, HasSubstr("the program holds 4 variants"));
  const InspectResult info = inspect(std::span<const uint8_t>(r.pte));
  ASSERT_TRUE(info.ok);
  EXPECT_EQ(info.report.plans.at(0).input_shapes.at(0).shape, (std::vector<int64_t>{2, 5, kWidth}));
  for (int64_t b : {1, 2})
    for (int64_t s : {2, 5}) expect_runs(r.pte, b, s);
  EXPECT_THAT(run_error(r.pte, 2, 3, "cpu"), HasSubstr("no variant"));
}

// x [n, 4] and a bool input c: y = If(c) then Flatten(x, axis 0) * 2 ([1, 4n]) else x + 1 ([n, 4]).
std::vector<uint8_t> sized_if_model() {
  ModelBuilder m(8, 17);
  m.input("x", kF32, {std::string("n"), 4});
  m.input("c", onnx::TensorProto_DataType_BOOL, {});
  m.raw_floats("two", {}, {2.0f});
  m.raw_floats("one", {}, {1.0f});
  m.output("y", kF32, {std::string("h"), std::string("w")});
  auto* n = m.node("If", {"c"}, {"y"}, "if");
  auto branch = [&](const char* name, const char* op, const char* other, const std::vector<DimSpec>& dims) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto_AttributeType_GRAPH);
    auto* g = a->mutable_g();
    g->set_name(name);
    std::string in = "x";
    if (op[0] == 'M') {  // then: flatten first
      auto* f = g->add_node();
      f->set_op_type("Flatten");
      f->add_input("x");
      f->add_output("flat");
      auto* axis = f->add_attribute();
      axis->set_name("axis");
      axis->set_type(onnx::AttributeProto_AttributeType_INT);
      axis->set_i(0);
      in = "flat";
    }
    auto* k = g->add_node();
    k->set_op_type(op);
    k->add_input(in);
    k->add_input(other);
    k->add_output(std::string(name) + "_out");
    ModelBuilder::set_type(g->add_output(), std::string(name) + "_out", kF32, dims);
  };
  branch("then_branch", "Mul", "two", {1, std::string("n4")});
  branch("else_branch", "Add", "one", {std::string("n"), 4});
  return m.bytes();
}

TEST(DimSizes, EachSizeVariantSplitsOnARunTimeIfOfItsOwn) {
  CompileOptions o;
  o.dim_sizes = {{"n", {2, 3}}};
  const CompileResult r = compile(sized_if_model(), fs::path(), o);
  ASSERT_TRUE(r.ok) << r.error();
  std::string notes;
  for (const auto& d : r.diagnostics) notes += d.message + "\n";
  EXPECT_THAT(notes, HasSubstr("compiled for n in {2, 3}: the program holds 2 variants"));
  EXPECT_THAT(notes, HasSubstr("holds 4 compiled variants"));  // two sizes x two branches
  for (const int64_t rows : {2, 3})
    for (const bool c : {true, false}) {
      std::vector<float> x(static_cast<size_t>(rows * 4));
      for (size_t i = 0; i < x.size(); ++i) x[i] = 0.25f * static_cast<float>(i) - 1.0f;
      for (const std::string backend : {"cpu", "vulkan"}) {
        if (backend == "vulkan" && runtime::vulkan_device_name().empty()) continue;
        RunOptions ro;
        ro.backend = backend;
        const RunResult out = run(std::span<const uint8_t>(r.pte),
                                  {Tensor::of(ir::DType::Float32, {rows, 4}, x),
                                   Tensor::of(ir::DType::Bool, {}, std::vector<uint8_t>{c})},
                                  ro);
        ASSERT_TRUE(out.ok) << backend << ": " << (out.diagnostics.empty() ? "" : out.diagnostics[0].message);
        EXPECT_EQ(out.outputs.at(0).shape, c ? (std::vector<int64_t>{1, rows * 4}) : (std::vector<int64_t>{rows, 4}));
        for (size_t i = 0; i < x.size(); ++i)
          EXPECT_FLOAT_EQ(out.outputs[0].get_f(static_cast<int64_t>(i)), c ? 2 * x[i] : x[i] + 1)
              << backend << " rows=" << rows << " c=" << c;
      }
    }
}

TEST(DimSizes, BadSizeListsAreRefusedWithTheReason) {
  CompileOptions o;
  o.dim_sizes = {{"sequence", {1, 2, 3}}, {"batch", {1, 2, 3}}};
  CompileResult r = compile(sequence_model(), fs::path(), o);
  EXPECT_FALSE(r.ok);
  EXPECT_THAT(r.error(), HasSubstr("one program holds at most 8"));
  o.dim_sizes = {{"sequence", {2, 3}}};
  o.dims = {{"sequence", 4}};
  r = compile(sequence_model(), fs::path(), o);
  EXPECT_THAT(r.error(), HasSubstr("dim 'sequence' is in both dims and dim_sizes"));
  o.dims = {{"batch", 1}};
  o.dim_sizes = {{"length", {2, 3}}};
  r = compile(sequence_model(), fs::path(), o);
  EXPECT_FALSE(r.ok);
  EXPECT_THAT(r.error(), HasSubstr("length"));
  o.dim_sizes = {{"sequence", {2, 3}}};
  o.max_seq_len = 16;
  r = compile(sequence_model(), fs::path(), o);
  EXPECT_THAT(r.error(), HasSubstr("cannot be combined with --max-seq-len"));
}

TEST(DimSizes, TheOptionTakesOneSizeOrAList) {
  EXPECT_EQ(compiler::parse_dim("sequence=128").second, (std::vector<int64_t>{128}));
  EXPECT_EQ(compiler::parse_dim("sequence=16,64,128").second, (std::vector<int64_t>{16, 64, 128}));
  EXPECT_THROW(compiler::parse_dim("sequence=16,16"), compiler::OptionError);
  EXPECT_THROW(compiler::parse_dim("sequence=16,0"), compiler::OptionError);
}

}  // namespace
}  // namespace vkc::test
