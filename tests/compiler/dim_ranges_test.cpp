// A model compiled for a range of sizes of a symbolic dim (--dim NAME=MIN..MAX): one program whose
// graph resizes as it runs (compiler/src/dynamic_programs.h, serializer/dynamic_dims.h). Every
// size in the range runs on cpu and lavapipe; expected values computed here.
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

std::vector<std::string> backends() {
  std::vector<std::string> b{"cpu"};
  if (!runtime::vulkan_device_name().empty()) b.push_back("vulkan");
  return b;
}

TEST(DimRanges, OneProgramResizesToEverySizeInTheRange) {
  CompileOptions o;
  o.dim_ranges = {{"sequence", {1, 9}}};
  const auto p = dynamic_sequence_program(o, "compiled for sequence in 1..9: one program that resizes as it runs", 9);
  ASSERT_TRUE(p.ok());
  const InspectResult& info = p.info;
  EXPECT_EQ(info.report.plans.at(0).delegate_calls, 1u);  // one graph, no variants
  const auto& in = info.report.plans.at(0).input_shapes.at(0);
  EXPECT_THAT(info.text(), HasSubstr("dim 1 takes 1..9 (sequence)"));
  ASSERT_EQ(in.ranges.size(), 1u);
  EXPECT_EQ(in.ranges.at(1).name, "sequence");
  EXPECT_EQ(in.ranges.at(1).min, 1);
  EXPECT_EQ(in.ranges.at(1).max, 9);
  EXPECT_THAT(info.json(), HasSubstr(R"("name": "sequence",)"));
  EXPECT_THAT(info.json(), HasSubstr(R"("vkc_dynamic_dims": "sequence 1..9; 3 tensor dims follow")"));
  for (int64_t s = 1; s <= 9; ++s) expect_runs(p.pte(), 1, s);
  expect_runs(p.pte(), 1, 4);  // a size run before, again (its instance is kept)
}

TEST(DimRanges, TwoDimsResizeTogether) {
  CompileOptions o;
  o.dim_ranges = {{"batch", {1, 3}}, {"sequence", {2, 6}}};
  const CompileResult r = compile(sequence_model(), fs::path(), o);
  ASSERT_TRUE(r.ok) << r.error();
  for (int64_t b : {1, 2, 3})
    for (int64_t s : {2, 3, 6}) expect_runs(r.pte, b, s);
  EXPECT_THAT(run_error(r.pte, 1, 1, "cpu"), HasSubstr("input 0 dim 1 ('sequence') is 1; the program takes 2 to 6"));
  EXPECT_THAT(run_error(r.pte, 1, 7, "cpu"), HasSubstr("or smaller"));
}

constexpr int64_t kMaxPos = 16;

// x [1, S, 4]: y = Reshape(x + P[:, :S], [1, 2S, 2]) with the target shape computed from Shape(x)
// as exporters write it, and P a [1, 16, 4] position table sliced to the sequence; z = y * 0.5
// through a Slice whose end is the computed 2S.
std::vector<uint8_t> position_model() {
  ModelBuilder m(8, 13);
  m.input("x", kF32, {1, std::string("sequence"), kWidth});
  std::vector<float> table(kMaxPos * kWidth);
  for (size_t i = 0; i < table.size(); ++i) table[i] = 0.1f * static_cast<float>(i) - 2.0f;
  m.raw_floats("P", {1, kMaxPos, kWidth}, table);
  auto ints = [&](const std::string& name, const std::vector<int64_t>& dims, const std::vector<int64_t>& v) {
    auto* t = m.initializer(name, onnx::TensorProto_DataType_INT64, dims);
    for (int64_t x : v) t->add_int64_data(x);
  };
  ints("zero", {1}, {0});
  ints("one", {1}, {1});
  ints("two", {1}, {2});
  ints("idx1", {}, {1});
  m.raw_floats("half", {}, {0.5f});
  m.node("Shape", {"x"}, {"shape"}, "shape");
  m.node("Gather", {"shape", "idx1"}, {"s"}, "seq");
  m.node("Unsqueeze", {"s", "zero"}, {"s1"}, "s1");
  m.node("Slice", {"P", "zero", "s1", "one"}, {"pos"}, "pos");
  m.node("Add", {"x", "pos"}, {"sum"}, "add");
  m.node("Mul", {"s1", "two"}, {"s2"}, "twice");
  attr_int(m.node("Concat", {"one", "s2", "two"}, {"target"}, "target"), "axis", 0);
  m.node("Reshape", {"sum", "target"}, {"y"}, "reshape");
  m.node("Slice", {"y", "zero", "s2", "one"}, {"ys"}, "cut");
  m.node("Mul", {"ys", "half"}, {"z"}, "halve");
  m.output("y", kF32, {1, std::string("s2"), 2});
  m.output("z", kF32, {1, std::string("s2"), 2});
  return m.bytes();
}

TEST(DimRanges, ShapeArithmeticAndAPositionTableFollowTheSize) {
  CompileOptions o;
  o.dim_ranges = {{"sequence", {1, kMaxPos}}};
  const CompileResult r = compile(position_model(), fs::path(), o);
  ASSERT_TRUE(r.ok) << r.error();
  for (const int64_t s : {int64_t{1}, int64_t{2}, int64_t{5}, int64_t{11}, kMaxPos}) {
    std::vector<float> x(static_cast<size_t>(s * kWidth));
    for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.37f * static_cast<float>(i) + 1.0f);
    for (const std::string& backend : backends()) {
      RunOptions ro;
      ro.backend = backend;
      const RunResult out = run(std::span<const uint8_t>(r.pte), {Tensor::of(ir::DType::Float32, {1, s, kWidth}, x)}, ro);
      ASSERT_TRUE(out.ok) << backend << " s=" << s << ": " << (out.diagnostics.empty() ? "" : out.diagnostics[0].message);
      ASSERT_EQ(out.outputs.at(0).shape, (std::vector<int64_t>{1, 2 * s, 2})) << backend;
      ASSERT_EQ(out.outputs.at(1).shape, (std::vector<int64_t>{1, 2 * s, 2})) << backend;
      for (int64_t i = 0; i < s * kWidth; ++i) {
        const double want = x[i] + (0.1 * static_cast<double>(i) - 2.0);  // row t of P is P's first rows
        EXPECT_NEAR(out.outputs[0].get_f(i), want, 1e-5) << backend << " s=" << s << " i=" << i;
        EXPECT_NEAR(out.outputs[1].get_f(i), 0.5 * want, 1e-5) << backend << " s=" << s << " i=" << i;
      }
    }
  }
}

// x [1, S, 4] -> x[:, ::2] ([1, ceil(S/2), 4]) or x / S (S a constant folded from Shape(x)).
std::vector<uint8_t> unresizable_model(bool stride) {
  ModelBuilder m(8, 13);
  m.input("x", kF32, {1, std::string("sequence"), kWidth});
  auto ints = [&](const std::string& name, const std::vector<int64_t>& v) {
    auto* t = m.initializer(name, onnx::TensorProto_DataType_INT64, {static_cast<int64_t>(v.size())});
    for (int64_t x : v) t->add_int64_data(x);
  };
  if (stride) {
    ints("starts", {0});
    ints("ends", {1 << 20});
    ints("axes", {1});
    ints("steps", {2});
    m.node("Slice", {"x", "starts", "ends", "axes", "steps"}, {"y"}, "every_other");
  } else {
    m.node("Shape", {"x"}, {"shape"}, "shape");
    ints("idx", {1});
    m.node("Gather", {"shape", "idx"}, {"s"}, "seq");
    attr_int(m.node("Cast", {"s"}, {"sf"}, "cast"), "to", kF32);
    m.node("Div", {"x", "sf"}, {"y"}, "mean_like");
  }
  m.output("y", kF32, {1, std::string("out"), kWidth});
  return m.bytes();
}

// Squeeze without axes drops every dim of size 1: the sequence dim too when it is 1, so the program
// at a size of 1 has another shape than at the others.
std::vector<uint8_t> squeeze_model() {
  ModelBuilder m(8, 13);
  m.input("x", kF32, {1, std::string("sequence"), kWidth});
  m.node("Squeeze", {"x"}, {"s"}, "squeeze_all");
  m.node("Relu", {"s"}, {"y"}, "relu");
  m.output("y", kF32, {});
  return m.bytes();
}

TEST(DimRanges, WhatOneResizingProgramCannotHoldIsRefusedWithTheReason) {
  CompileOptions o;
  o.dim_ranges = {{"sequence", {1, 8}}};
  CompileResult r = compile(unresizable_model(true), fs::path(), o);
  EXPECT_FALSE(r.ok);
  EXPECT_THAT(r.error(), HasSubstr("not an affine function of the dims"));
  EXPECT_THAT(r.error(), HasSubstr("compile for a list of sizes instead"));
  r = compile(unresizable_model(false), fs::path(), o);
  EXPECT_FALSE(r.ok);
  EXPECT_THAT(r.error(), HasSubstr("a constant that changes with the dims other than as a prefix"));
  // What changes only at a size of 1 is refused with the hint to start the range at 2, which works.
  r = compile(squeeze_model(), fs::path(), o);
  EXPECT_FALSE(r.ok);
  EXPECT_THAT(r.error(), HasSubstr("try a MIN of 2"));
  CompileOptions from2;
  from2.dim_ranges = {{"sequence", {2, 8}}};
  EXPECT_TRUE(compile(squeeze_model(), fs::path(), from2).ok);
  // The same models compile for a list of sizes.
  CompileOptions listed;
  listed.dim_sizes = {{"sequence", {3, 8}}};
  EXPECT_TRUE(compile(unresizable_model(true), fs::path(), listed).ok);
  // Malformed or conflicting requests.
  o.dim_ranges = {{"sequence", {4, 4}}};
  EXPECT_THAT(compile(sequence_model(), fs::path(), o).error(), HasSubstr("0 < MIN < MAX"));
  o.dim_ranges = {{"sequence", {1, 4}}};
  o.dims = {{"sequence", 2}};
  EXPECT_THAT(compile(sequence_model(), fs::path(), o).error(), HasSubstr("in dim_ranges and in dims"));
  o.dims = {};
  o.dim_sizes = {{"batch", {1, 2}}};
  EXPECT_THAT(compile(sequence_model(), fs::path(), o).error(), HasSubstr("cannot be combined with --dim lists"));
}

TEST(DimRanges, TheOptionTakesARange) {
  const auto r = compiler::parse_dim_range("sequence=1..128");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->first, "sequence");
  EXPECT_EQ(r->second, (std::pair<int64_t, int64_t>{1, 128}));
  EXPECT_FALSE(compiler::parse_dim_range("sequence=16,64"));
  EXPECT_THROW(compiler::parse_dim_range("sequence=8..8"), compiler::OptionError);
  EXPECT_THROW(compiler::parse_dim_range("sequence=0..8"), compiler::OptionError);
  EXPECT_THROW(compiler::parse_dim_range("sequence=1..x"), compiler::OptionError);
  EXPECT_THROW(compiler::parse_dim_range("=1..4"), compiler::OptionError);
}

}  // namespace
}  // namespace vkc::test
