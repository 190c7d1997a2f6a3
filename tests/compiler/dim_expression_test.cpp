// Symbolic dims written as arithmetic over other dims (compiler/src/dim_expression.h), and their
// use by the importer: an input whose dim is "past + seq" gets the sum of the fixed dims.
#include "dim_expression.h"

#include <gtest/gtest.h>

#include <limits>

#include "onnx_test_models.h"
#include "vkc/compiler/onnx_importer.h"

namespace vkc::compiler::detail {
namespace {

const std::map<std::string, int64_t> kDims = {{"past_sequence_length", 31}, {"sequence_length", 3}, {"s0", 7},
                                              {"s1", 4}, {"batch.size", 2}};

TEST(DimExpression, EvaluatesWhatExportersWrite) {
  EXPECT_EQ(eval_dim_expression("past_sequence_length + sequence_length", kDims), 34);
  EXPECT_EQ(eval_dim_expression("s0 + s1", kDims), 11);
  EXPECT_EQ(eval_dim_expression("2*s0", kDims), 14);
  EXPECT_EQ(eval_dim_expression("(s0//2)", kDims), 3);
  EXPECT_EQ(eval_dim_expression("s0 - s1 - 1", kDims), 2);  // left to right
  EXPECT_EQ(eval_dim_expression("s0 - (s1 - 1)", kDims), 4);
  EXPECT_EQ(eval_dim_expression("2 + 3*s1", kDims), 14);    // * before +
  EXPECT_EQ(eval_dim_expression("Max(1, s0 - 10)", kDims), 1);
  EXPECT_EQ(eval_dim_expression("Min(s0, s1, 5)", kDims), 4);
  EXPECT_EQ(eval_dim_expression("floor(s0/2)", kDims), 3);
  EXPECT_EQ(eval_dim_expression("ceiling(s0/2)", kDims), 4);
  EXPECT_EQ(eval_dim_expression("(-s0)//2", kDims), -4);    // floor division, as Python's
  EXPECT_EQ(eval_dim_expression("s0*s1/2", kDims), 14);     // exact division
  EXPECT_EQ(eval_dim_expression("batch.size", kDims), 2);
  EXPECT_EQ(eval_dim_expression(" 12 ", kDims), 12);
}

TEST(DimExpression, RefusesWhatItCannotEvaluate) {
  for (const char* bad : {"", "unknown + 1", "s0 +", "s0 s1", "s0/2", "s0//0", "(s0", "s0)", "Foo(s0)", "Max(s0)",
                          "9223372036854775807 + 1", "99999999999999999999", "s0 % 2", "2**s0"})
    EXPECT_FALSE(eval_dim_expression(bad, kDims).has_value()) << bad;
  const std::string deep = std::string(200, '(') + "1" + std::string(200, ')');
  EXPECT_FALSE(eval_dim_expression(deep, kDims).has_value());
}

TEST(DimExpression, NamesTheSymbolsItReads) {
  EXPECT_EQ(dim_expression_symbols("past_sequence_length + sequence_length"),
            (std::set<std::string>{"past_sequence_length", "sequence_length"}));
  EXPECT_EQ(dim_expression_symbols("Max(1, 2*s0) + floor(s1.x/2)"), (std::set<std::string>{"s0", "s1.x"}));
  EXPECT_TRUE(dim_expression_symbols("12").empty());
}

TEST(DimExpression, AnInputDimOfTheSumOfFixedDimsGetsTheirSum) {
  // mask [1, "past + seq"] beside x [1, seq]: the mask (and what follows it) is [1, past + seq].
  test::ModelBuilder b;
  b.input("x", onnx::TensorProto::FLOAT, {int64_t{1}, "seq"});
  b.input("mask", onnx::TensorProto::FLOAT, {int64_t{1}, "past + seq"});
  b.node("Relu", {"mask"}, {"y"});
  b.output("y", onnx::TensorProto::FLOAT, {int64_t{1}, "past + seq"});
  ImportOptions o;
  o.dims = {{"seq", 3}, {"past", 5}};
  const auto bytes = b.bytes();
  const auto g = import_onnx_bytes(bytes, {}, o);
  EXPECT_EQ(g->inputs[1]->shape().sizes(), (std::vector<int64_t>{1, 8}));
  EXPECT_EQ(g->outputs[0]->shape().sizes(), (std::vector<int64_t>{1, 8}));
}

}  // namespace
}  // namespace vkc::compiler::detail
