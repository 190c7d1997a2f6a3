// Symbolic dims the graph fixes, solved by the importer (compiler/src/dim_solver.h): a dim that
// meets a size through Concat's other axes or MatMul's inner dims takes it, a symbol two operators
// require equal is one, and a --dim that contradicts a node is one error naming it.
#include <gtest/gtest.h>

#include "onnx_test_models.h"
#include "vkc/compiler/onnx_importer.h"

namespace vkc::test {
namespace {

using compiler::ImportError;
using compiler::ImportOptions;

// y = x [1, k] @ w [8, 4] (k is MatMul's inner dim: 8); z = Concat(u [rows, k], c [3, 8]) on axis 0
// (u's k is c's 8 on the other axis). Nothing fixes rows.
ModelBuilder linear_and_concat() {
  ModelBuilder b;
  b.input("x", kF32, {int64_t{1}, std::string("k")});
  b.input("u", kF32, {std::string("rows"), std::string("k")});
  b.raw_floats("w", {8, 4}, std::vector<float>(32, 0.5f));
  b.raw_floats("c", {3, 8}, std::vector<float>(24, 1.0f));
  b.node("MatMul", {"x", "w"}, {"y"}, "matmul");
  b.node("Concat", {"u", "c"}, {"z"}, "concat");  // u's k is c's 8 on the other axis
  attr_int(b.graph()->mutable_node(1), "axis", 0);
  b.output("y", kF32, {int64_t{1}, int64_t{4}});
  b.output("z", kF32, {std::string("rows_plus_3"), int64_t{8}});
  return b;
}

TEST(DimSolver, SymbolsTheGraphFixesAreSolved) {
  TempDir dir;
  const auto path = linear_and_concat().save(dir / "m.onnx");
  ImportOptions o;
  o.dims = {{"rows", 2}};  // k is left to the graph: MatMul's inner dim and Concat's other axis
  const auto g = compiler::import_onnx_file(path, o);
  ASSERT_EQ(g->inputs.size(), 2u);
  EXPECT_EQ(g->inputs[0]->shape().str(), "[1,8]");
  EXPECT_EQ(g->inputs[1]->shape().str(), "[2,8]");
}

TEST(DimSolver, ADimThatContradictsANodeIsOneErrorNamingIt) {
  TempDir dir;
  const auto path = linear_and_concat().save(dir / "m.onnx");
  ImportOptions o;
  o.dims = {{"rows", 2}, {"k", 6}};
  try {
    compiler::import_onnx_file(path, o);
    FAIL() << "imported";
  } catch (const ImportError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("node 'matmul' (MatMul) needs dim 0 of 'w' (the inner dim, equal to dim 1 of 'x') to be 8, "
                        "but the size given for 'k' (6)"),
              std::string::npos)
        << what;
  }
}

TEST(DimSolver, ASymbolNothingFixesStaysSymbolic) {
  TempDir dir;
  const auto path = linear_and_concat().save(dir / "m.onnx");
  const auto g = compiler::import_onnx_file(path, {});  // rows: no operator fixes it
  EXPECT_EQ(g->inputs[1]->shape().str(), "[rows,8]");
}

}  // namespace
}  // namespace vkc::test
