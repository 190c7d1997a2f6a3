// If whose branches give outputs of different shapes: exact only once the condition is known, so
// the output waits for folding (vkc::IfSelect) and takes the taken branch's value; a condition
// known only at run time is refused with the reason, unless one branch cannot run with the
// compiled shapes (then the other is taken, with a note). Expected values computed here.
#include <gmock/gmock.h>
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <functional>

#include "onnx_test_models.h"
#include "vkc/runtime/vulkan.h"
#include "vkc/serializer/pte_reader.h"
#include "vkc/vkc.h"

namespace vkc::test {
namespace {

using ::testing::HasSubstr;

onnx::GraphProto* add_branch(onnx::NodeProto* n, const char* name) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto_AttributeType_GRAPH);
  auto* g = a->mutable_g();
  g->set_name(name);
  return g;
}

// One node of a branch graph: op(inputs) -> output.
void branch_node(onnx::GraphProto* g, const char* op, std::vector<std::string> inputs, const char* output) {
  auto* n = g->add_node();
  n->set_op_type(op);
  for (const auto& i : inputs) n->add_input(i);
  n->add_output(output);
}

// x [4, 4] and the If's condition: Equal(Shape(x)[1], width) (known once shapes fold) or, with
// `runtime_cond`, a graph input `c`. Returns the condition's name.
std::string input_and_condition(ModelBuilder& m, int64_t width, bool runtime_cond) {
  m.input("x", kF32, {4, 4});
  if (runtime_cond) {
    m.input("c", onnx::TensorProto_DataType_BOOL, {});
    return "c";
  }
  auto* idx = m.initializer("one", onnx::TensorProto_DataType_INT64, {});
  idx->add_int64_data(1);
  auto* w = m.initializer("w", onnx::TensorProto_DataType_INT64, {});
  w->add_int64_data(width);
  m.node("Shape", {"x"}, {"shape"}, "shape");
  attr_int(m.node("Gather", {"shape", "one"}, {"dim1"}, "dim1"), "axis", 0);
  m.node("Equal", {"dim1", "w"}, {"cond"}, "eq");
  return "cond";
}

// y = If(cond) with then: Reshape(x, target) * 2, its output declared `then_dims`. Returns the If.
onnx::NodeProto* if_with_reshape_then(ModelBuilder& m, const std::string& cond, const std::vector<int64_t>& target,
                                      const std::vector<DimSpec>& then_dims) {
  auto* t = m.initializer("target", onnx::TensorProto_DataType_INT64, {static_cast<int64_t>(target.size())});
  for (int64_t d : target) t->add_int64_data(d);
  m.raw_floats("two", {}, {2.0f});
  m.raw_floats("one_f", {}, {1.0f});
  auto* n = m.node("If", {cond}, {"y"}, "if");
  auto* then_g = add_branch(n, "then_branch");
  branch_node(then_g, "Reshape", {"x", "target"}, "r");
  branch_node(then_g, "Mul", {"r", "two"}, "t_out");
  ModelBuilder::set_type(then_g->add_output(), "t_out", kF32, then_dims);
  return n;
}

// then: Reshape(x, [2, 8]) * 2, else: x + 1 ([4, 4]).
std::vector<uint8_t> if_model(int64_t width, bool runtime_cond) {
  ModelBuilder m(8, 17);
  const std::string cond = input_and_condition(m, width, runtime_cond);
  m.output("y", kF32, {std::string("h"), std::string("w")});
  auto* else_g = add_branch(if_with_reshape_then(m, cond, {2, 8}, {2, 8}), "else_branch");
  branch_node(else_g, "Add", {"x", "one_f"}, "e_out");
  ModelBuilder::set_type(else_g->add_output(), "e_out", kF32, {4, 4});
  return m.bytes();
}

TEST(IfSelect, BranchesOfDifferentShapesTakeTheBranchAFoldedConditionPicks) {
  std::vector<float> x(16);
  for (size_t i = 0; i < x.size(); ++i) x[i] = 0.5f * float(i) - 3.0f;
  for (const bool then_taken : {true, false}) {
    const CompileResult r = compile(if_model(then_taken ? 4 : 5, false), fs::path(), CompileOptions{});
    ASSERT_TRUE(r.ok) << r.error();
    for (const std::string backend : {"cpu", "vulkan"}) {
      if (backend == "vulkan" && runtime::vulkan_device_name().empty()) continue;
      RunOptions ro;
      ro.backend = backend;
      const RunResult out = run(std::span<const uint8_t>(r.pte), {Tensor::of(ir::DType::Float32, {4, 4}, x)}, ro);
      ASSERT_TRUE(out.ok) << backend;
      EXPECT_EQ(out.outputs.at(0).shape, then_taken ? (std::vector<int64_t>{2, 8}) : (std::vector<int64_t>{4, 4}));
      for (size_t i = 0; i < x.size(); ++i)
        EXPECT_FLOAT_EQ(out.outputs[0].get_f(static_cast<int64_t>(i)), then_taken ? 2 * x[i] : x[i] + 1) << backend;
    }
  }
}

// then: Reshape(x, [16]) * 2, else: `else_op` of x + 1 flattened to [16] ("Reshape") or Unique(x + 1)
// (no Vulkan lowering). Branch outputs are declared with symbolic dims only, so their shapes are
// known once propagated. The condition is Equal(Shape(x)[1], 4) (true) or input `c`.
std::vector<uint8_t> symbolic_if_model(const char* else_op, bool runtime_cond) {
  ModelBuilder m(8, 17);
  const std::string cond = input_and_condition(m, 4, runtime_cond);
  m.output("y", kF32, {std::string("n")});
  auto* else_g = add_branch(if_with_reshape_then(m, cond, {16}, {std::string("a")}), "else_branch");
  branch_node(else_g, "Add", {"x", "one_f"}, "s");
  if (std::string(else_op) == "Reshape") branch_node(else_g, "Reshape", {"s", "target"}, "e_out");
  else branch_node(else_g, else_op, {"s"}, "e_out");
  ModelBuilder::set_type(else_g->add_output(), "e_out", kF32, {std::string("b")});
  return m.bytes();
}

std::vector<float> ramp() {
  std::vector<float> x(16);
  for (size_t i = 0; i < x.size(); ++i) x[i] = 0.5f * float(i) - 3.0f;
  return x;
}

TEST(IfSelect, TheUntakenBranchIsDroppedBeforeLoweringSoWhatItHoldsNeedNotLower) {
  const CompileResult r = compile(symbolic_if_model("Unique", false), fs::path(), CompileOptions{});
  ASSERT_TRUE(r.ok) << r.error();
  for (const auto& n : r.partition.nodes) EXPECT_NE(n.op, "Unique") << n.name;
  const auto x = ramp();
  const RunResult out = run(std::span<const uint8_t>(r.pte), {Tensor::of(ir::DType::Float32, {4, 4}, x)}, RunOptions{});
  ASSERT_TRUE(out.ok);
  ASSERT_EQ(out.outputs.at(0).shape, (std::vector<int64_t>{16}));
  for (size_t i = 0; i < x.size(); ++i) EXPECT_FLOAT_EQ(out.outputs[0].get_f(static_cast<int64_t>(i)), 2 * x[i]);
}

TEST(IfSelect, ARunTimeConditionOverBranchesThatTurnOutAlikeSelectsPerCall) {
  const CompileResult r = compile(symbolic_if_model("Reshape", true), fs::path(), CompileOptions{});
  ASSERT_TRUE(r.ok) << r.error();
  const auto x = ramp();
  for (const std::string backend : {"cpu", "vulkan"}) {
    if (backend == "vulkan" && runtime::vulkan_device_name().empty()) continue;
    for (const bool c : {true, false}) {
      RunOptions ro;
      ro.backend = backend;
      const RunResult out = run(std::span<const uint8_t>(r.pte),
                                {Tensor::of(ir::DType::Float32, {4, 4}, x), Tensor::of(ir::DType::Bool, {}, std::vector<uint8_t>{c})}, ro);
      ASSERT_TRUE(out.ok) << backend;
      for (size_t i = 0; i < x.size(); ++i)
        EXPECT_FLOAT_EQ(out.outputs.at(0).get_f(static_cast<int64_t>(i)), c ? 2 * x[i] : x[i] + 1) << backend << " c=" << c;
    }
  }
}

// Runs `pte` with x and the extra inputs on each backend; checks y against `expect(x)` and `shape`.
void expect_runs(const std::vector<uint8_t>& pte, const std::vector<Tensor>& extra, const std::vector<int64_t>& shape,
                 const std::function<float(float)>& expect, size_t output = 0) {
  const auto x = ramp();
  std::vector<Tensor> inputs{Tensor::of(ir::DType::Float32, {4, 4}, x)};
  inputs.insert(inputs.end(), extra.begin(), extra.end());
  for (const std::string backend : {"cpu", "vulkan"}) {
    if (backend == "vulkan" && runtime::vulkan_device_name().empty()) continue;
    RunOptions ro;
    ro.backend = backend;
    const RunResult out = run(std::span<const uint8_t>(pte), inputs, ro);
    ASSERT_TRUE(out.ok) << backend << ": " << (out.diagnostics.empty() ? "" : out.diagnostics[0].message);
    ASSERT_EQ(out.outputs.at(output).shape, shape) << backend;
    for (size_t i = 0; i < x.size(); ++i)
      EXPECT_FLOAT_EQ(out.outputs[output].get_f(static_cast<int64_t>(i)), expect(x[i])) << backend << " at " << i;
  }
}

Tensor flag(bool c) { return Tensor::of(ir::DType::Bool, {}, std::vector<uint8_t>{c}); }

// The chain's control flow: how many JumpFalseCalls and MoveCalls the program holds.
std::pair<size_t, size_t> jumps_and_moves(const std::vector<uint8_t>& pte) {
  const auto file = serializer::read_pte_bytes(std::span<const uint8_t>(pte));
  size_t jumps = 0, moves = 0;
  for (const auto& instr : file.program.plans.at(0).instructions) {
    jumps += std::holds_alternative<serializer::JumpFalseCall>(instr);
    moves += std::holds_alternative<serializer::MoveCall>(instr);
  }
  return {jumps, moves};
}

TEST(IfSelect, ARunTimeConditionOverBranchesOfDifferentShapesPicksItsProgramAsItRuns) {
  // then: Reshape(x, [2, 8]) * 2, else: x + 1, the condition a graph input: the model is compiled
  // once per branch and the program jumps on the input to the one it takes.
  const CompileResult r = compile(if_model(4, true), fs::path(), CompileOptions{});
  ASSERT_TRUE(r.ok) << r.error();
  ASSERT_EQ(r.diagnostics.size(), 1u);
  EXPECT_EQ(r.diagnostics[0].severity, Severity::Note);
  EXPECT_THAT(r.diagnostics[0].message, HasSubstr("If condition c is decided at run time"));
  EXPECT_THAT(r.diagnostics[0].message, HasSubstr("holds 2 compiled variants"));
  EXPECT_EQ(jumps_and_moves(r.pte), (std::pair<size_t, size_t>{2, 2}));
  // vkc inspect shows the control flow; no program computes the condition (it is an input).
  const InspectResult info = inspect(std::span<const uint8_t>(r.pte));
  ASSERT_TRUE(info.ok);
  EXPECT_EQ(info.report.plans.at(0).jumps, 2u);
  EXPECT_EQ(info.report.plans.at(0).delegate_calls, 2u);
  EXPECT_THAT(info.text(), HasSubstr("2 jumps, 2 moves: branches chosen at run time"));
  expect_runs(r.pte, {flag(true)}, {2, 8}, [](float v) { return 2 * v; });
  expect_runs(r.pte, {flag(false)}, {4, 4}, [](float v) { return v + 1; });
}

// As the legacy torch exporter writes `if bool(x.sum() > 0)` of a scripted module: ReduceSum
// (no keepdims: a 0-d sum), Greater, Cast to bool, If over branches of different shapes.
std::vector<uint8_t> computed_condition_model() {
  ModelBuilder m(8, 17);
  m.input("x", kF32, {4, 4});
  m.raw_floats("zero", {}, {0.0f});
  attr_int(m.node("ReduceSum", {"x"}, {"s"}, "sum"), "keepdims", 0);
  m.node("Greater", {"s", "zero"}, {"gt"}, "gt");
  attr_int(m.node("Cast", {"gt"}, {"cond"}, "cast"), "to", onnx::TensorProto_DataType_BOOL);
  m.output("y", kF32, {std::string("h"), std::string("w")});
  auto* else_g = add_branch(if_with_reshape_then(m, "cond", {2, 8}, {2, 8}), "else_branch");
  branch_node(else_g, "Add", {"x", "one_f"}, "e_out");
  ModelBuilder::set_type(else_g->add_output(), "e_out", kF32, {4, 4});
  return m.bytes();
}

TEST(IfSelect, AConditionComputedFromTheInputsRunsBeforeTheJump) {
  const CompileResult r = compile(computed_condition_model(), fs::path(), CompileOptions{});
  ASSERT_TRUE(r.ok) << r.error();
  EXPECT_EQ(jumps_and_moves(r.pte), (std::pair<size_t, size_t>{2, 2}));
  // ramp() sums to 12 (> 0): then. Shifted down it sums below 0: else (checked on the values).
  expect_runs(r.pte, {}, {2, 8}, [](float v) { return 2 * v; });
  const auto x = ramp();
  std::vector<float> low(x.size());
  for (size_t i = 0; i < x.size(); ++i) low[i] = x[i] - 2;
  const RunResult out = run(std::span<const uint8_t>(r.pte), {Tensor::of(ir::DType::Float32, {4, 4}, low)}, RunOptions{});
  ASSERT_TRUE(out.ok);
  ASSERT_EQ(out.outputs.at(0).shape, (std::vector<int64_t>{4, 4}));
  for (size_t i = 0; i < low.size(); ++i) EXPECT_FLOAT_EQ(out.outputs[0].get_f(static_cast<int64_t>(i)), low[i] + 1);
}

TEST(IfSelect, TwoIndependentConditionsMakeFourProgramsEachRunWhereItsConditionsHold) {
  // y = If(c) {Reshape(x, [2, 8]) * 2} else {x + 1}; z = If(d) {Reshape(x, [16]) * 2} else {x + 1}.
  ModelBuilder m(8, 17);
  input_and_condition(m, 4, true);
  m.input("d", onnx::TensorProto_DataType_BOOL, {});
  m.output("y", kF32, {std::string("h"), std::string("w")});
  m.output("z", kF32, {std::string("n")});
  auto* else_y = add_branch(if_with_reshape_then(m, "c", {2, 8}, {2, 8}), "else_branch");
  branch_node(else_y, "Add", {"x", "one_f"}, "e_out");
  ModelBuilder::set_type(else_y->add_output(), "e_out", kF32, {4, 4});
  auto* t = m.initializer("flat", onnx::TensorProto_DataType_INT64, {1});
  t->add_int64_data(16);
  auto* n = m.node("If", {"d"}, {"z"}, "if_z");
  auto* then_z = add_branch(n, "then_branch");
  branch_node(then_z, "Reshape", {"x", "flat"}, "zr");
  branch_node(then_z, "Mul", {"zr", "two"}, "zt_out");
  ModelBuilder::set_type(then_z->add_output(), "zt_out", kF32, {16});
  auto* else_z = add_branch(n, "else_branch");
  branch_node(else_z, "Add", {"x", "one_f"}, "ze_out");
  ModelBuilder::set_type(else_z->add_output(), "ze_out", kF32, {4, 4});
  const CompileResult r = compile(m.bytes(), fs::path(), CompileOptions{});
  ASSERT_TRUE(r.ok) << r.error();
  EXPECT_THAT(r.diagnostics.at(0).message, HasSubstr("holds 4 compiled variants"));
  EXPECT_EQ(jumps_and_moves(r.pte), (std::pair<size_t, size_t>{6, 8}));
  for (const bool c : {true, false})
    for (const bool d : {true, false}) {
      SCOPED_TRACE(fmt::format("c={} d={}", c, d));
      expect_runs(r.pte, {flag(c), flag(d)}, c ? std::vector<int64_t>{2, 8} : std::vector<int64_t>{4, 4},
                  [c](float v) { return c ? 2 * v : v + 1; }, 0);
      expect_runs(r.pte, {flag(c), flag(d)}, d ? std::vector<int64_t>{16} : std::vector<int64_t>{4, 4},
                  [d](float v) { return d ? 2 * v : v + 1; }, 1);
    }
}

TEST(IfSelect, InputValueBindsTheConditionsInputSoTheIfResolves) {
  // --input-value c=true / c=0: the run-time condition becomes a constant, the If its branch, and
  // the program takes x alone.
  const auto x = ramp();
  for (const char* value : {"true", "0"}) {
    const bool then_taken = std::string(value) == "true";
    CompileOptions o;
    o.input_values["c"] = value;
    const CompileResult r = compile(if_model(4, true), fs::path(), o);
    ASSERT_TRUE(r.ok) << r.error();
    const RunResult out = run(std::span<const uint8_t>(r.pte), {Tensor::of(ir::DType::Float32, {4, 4}, x)}, RunOptions{});
    ASSERT_TRUE(out.ok) << value;
    EXPECT_EQ(out.outputs.at(0).shape, then_taken ? (std::vector<int64_t>{2, 8}) : (std::vector<int64_t>{4, 4}));
    for (size_t i = 0; i < x.size(); ++i)
      EXPECT_FLOAT_EQ(out.outputs[0].get_f(static_cast<int64_t>(i)), then_taken ? 2 * x[i] : x[i] + 1) << value;
  }
  CompileOptions bad;
  bad.input_values["c"] = "2";
  EXPECT_THAT(compile(if_model(4, true), fs::path(), bad).error(), HasSubstr("--input-value 'c=2': '2' is not a value"));
  bad.input_values = {{"nope", "1"}};
  EXPECT_THAT(compile(if_model(4, true), fs::path(), bad).error(), HasSubstr("the model has no input 'nope' (inputs: x, c)"));
}

TEST(IfSelect, ABranchOfTheSameStaticShapeThatAFoldedConditionDropsNeedNotLower) {
  // Predication (a Where over both branches) whose condition folds: the taken branch alone stays;
  // the other (Erf, which has no Vulkan lowering) is gone before lowering.
  ModelBuilder m(8, 17);
  const std::string cond = input_and_condition(m, 4, false);
  m.raw_floats("two", {}, {2.0f});
  m.output("y", kF32, {4, 4});
  auto* n = m.node("If", {cond}, {"y"}, "if");
  auto* then_g = add_branch(n, "then_branch");
  branch_node(then_g, "Mul", {"x", "two"}, "t_out");
  ModelBuilder::set_type(then_g->add_output(), "t_out", kF32, {4, 4});
  auto* else_g = add_branch(n, "else_branch");
  branch_node(else_g, "Erf", {"x"}, "e_out");
  ModelBuilder::set_type(else_g->add_output(), "e_out", kF32, {4, 4});
  const CompileResult r = compile(m.bytes(), fs::path(), CompileOptions{});
  ASSERT_TRUE(r.ok) << r.error();
  for (const auto& node : r.partition.nodes) EXPECT_NE(node.op, "Erf") << node.name;
  const auto x = ramp();
  const RunResult out = run(std::span<const uint8_t>(r.pte), {Tensor::of(ir::DType::Float32, {4, 4}, x)}, RunOptions{});
  ASSERT_TRUE(out.ok);
  for (size_t i = 0; i < x.size(); ++i) EXPECT_FLOAT_EQ(out.outputs.at(0).get_f(static_cast<int64_t>(i)), 2 * x[i]);
}


// A branch whose MatMul has inner dims that differ ([4, 4] x w32 [3, 2]): it fails for every input.
void ill_formed_branch(onnx::GraphProto* g, const char* out) {
  branch_node(g, "MatMul", {"x", "w32"}, out);
  ModelBuilder::set_type(g->add_output(), out, kF32, {std::string("p"), std::string("q")});
}

TEST(IfSelect, ABranchThatCannotRunWithTheseShapesIsLeftOutWithANote) {
  // A run-time condition over then: Reshape(x, [2, 8]) * 2 and else: a MatMul that cannot run on
  // [4, 4]: the else branch would fail for any input (in onnxruntime too), so then is always taken.
  ModelBuilder m(8, 17);
  const std::string cond = input_and_condition(m, 4, true);
  m.output("y", kF32, {std::string("h"), std::string("w")});
  m.raw_floats("w32", {3, 2}, {1, 2, 3, 4, 5, 6});
  auto* n = if_with_reshape_then(m, cond, {2, 8}, {2, 8});
  ill_formed_branch(add_branch(n, "else_branch"), "e_out");
  const CompileResult r = compile(m.bytes(), fs::path(), CompileOptions{});
  ASSERT_TRUE(r.ok) << r.error();
  ASSERT_EQ(r.diagnostics.size(), 1u);
  EXPECT_EQ(r.diagnostics[0].severity, Severity::Note);
  EXPECT_THAT(r.diagnostics[0].message, HasSubstr("If output 'y': the else branch cannot run with these input shapes"));
  EXPECT_THAT(r.diagnostics[0].message, HasSubstr("(MatMul): inner dims differ: [4,4] x [3,2]"));
  const auto x = ramp();
  for (const std::string backend : {"cpu", "vulkan"}) {
    if (backend == "vulkan" && runtime::vulkan_device_name().empty()) continue;
    RunOptions ro;
    ro.backend = backend;
    const RunResult out = run(std::span<const uint8_t>(r.pte),
                              {Tensor::of(ir::DType::Float32, {4, 4}, x), Tensor::of(ir::DType::Bool, {}, std::vector<uint8_t>{1})}, ro);
    ASSERT_TRUE(out.ok) << backend;
    ASSERT_EQ(out.outputs.at(0).shape, (std::vector<int64_t>{2, 8})) << backend;
    for (size_t i = 0; i < x.size(); ++i) EXPECT_FLOAT_EQ(out.outputs[0].get_f(static_cast<int64_t>(i)), 2 * x[i]) << backend;
  }
}

TEST(IfSelect, AnIllFormedBranchInsideABranchIsLeftOutFirst) {
  // then: the ill-formed MatMul; else: If(c) { then: the ill-formed MatMul, else: x + 1 }. The inner
  // If resolves to x + 1, which leaves the outer else branch well formed: y = x + 1.
  ModelBuilder m(8, 17);
  const std::string cond = input_and_condition(m, 4, true);
  m.raw_floats("one_f", {}, {1.0f});
  m.raw_floats("w32", {3, 2}, {1, 2, 3, 4, 5, 6});
  m.output("y", kF32, {std::string("h"), std::string("w")});
  auto* outer = m.node("If", {cond}, {"y"}, "outer");
  ill_formed_branch(add_branch(outer, "then_branch"), "t_out");
  auto* else_g = add_branch(outer, "else_branch");
  auto* inner = else_g->add_node();
  inner->set_op_type("If");
  inner->set_name("inner");
  inner->add_input(cond);
  inner->add_output("inner_out");
  ill_formed_branch(add_branch(inner, "then_branch"), "it_out");
  auto* inner_else = add_branch(inner, "else_branch");
  branch_node(inner_else, "Add", {"x", "one_f"}, "ie_out");
  ModelBuilder::set_type(inner_else->add_output(), "ie_out", kF32, {4, 4});
  ModelBuilder::set_type(else_g->add_output(), "inner_out", kF32, {std::string("r"), std::string("s")});
  const CompileResult r = compile(m.bytes(), fs::path(), CompileOptions{});
  ASSERT_TRUE(r.ok) << r.error();
  EXPECT_EQ(r.diagnostics.size(), 2u);  // the inner If, then the outer
  const auto x = ramp();
  const RunResult out = run(std::span<const uint8_t>(r.pte),
                            {Tensor::of(ir::DType::Float32, {4, 4}, x), Tensor::of(ir::DType::Bool, {}, std::vector<uint8_t>{0})},
                            RunOptions{});
  ASSERT_TRUE(out.ok);
  ASSERT_EQ(out.outputs.at(0).shape, (std::vector<int64_t>{4, 4}));
  for (size_t i = 0; i < x.size(); ++i) EXPECT_FLOAT_EQ(out.outputs[0].get_f(static_cast<int64_t>(i)), x[i] + 1);
}

TEST(IfSelect, BothBranchesIllFormedIsStillRefused) {
  ModelBuilder m(8, 17);
  const std::string cond = input_and_condition(m, 4, true);
  m.raw_floats("w32", {3, 2}, {1, 2, 3, 4, 5, 6});
  m.output("y", kF32, {std::string("h"), std::string("w")});
  auto* n = m.node("If", {cond}, {"y"}, "if");
  ill_formed_branch(add_branch(n, "then_branch"), "t_out");
  ill_formed_branch(add_branch(n, "else_branch"), "e_out");
  // Either program fails for every input; the error names the branch being compiled.
  const CompileResult r = compile(m.bytes(), fs::path(), CompileOptions{});
  EXPECT_FALSE(r.ok);
  EXPECT_THAT(r.error(), HasSubstr("with If condition 'c' true: "));
  EXPECT_THAT(r.error(), HasSubstr("cannot run on Vulkan"));
}

}  // namespace
}  // namespace vkc::test
