// A program that chooses between whole programs at run time (build_program.h, BranchTree).
#include <fmt/format.h>

#include <algorithm>

#include "emit_part.h"
#include "vkc/serializer/build_program.h"
#include "vkc/serializer/errors.h"

namespace vkc::serializer {
namespace {

using detail::PartContext;

std::vector<const ir::Graph*> leaves(const BranchTree& t) {
  if (t.is_leaf()) return {t.leaf.graph};
  auto a = leaves(*t.then_branch);
  if (!t.else_branch) return a;  // failed shape tests: nothing runs
  const auto b = leaves(*t.else_branch);
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

class BranchEmitter {
 public:
  explicit BranchEmitter(PartContext& cx) : cx_(cx), plan_(cx.pb.plan()) {}

  // The plan's inputs (the first part's graph inputs) and its outputs: tensors no part writes,
  // filled by each leaf's MoveCalls; where the leaves' shapes differ, dynamic-bound by the largest.
  void declare(const BranchTree& tree) {
    const auto all = leaves(tree);
    const ir::Graph& first = *all.front();
    for (size_t i = 0; i < first.inputs.size(); ++i) {
      std::vector<int64_t> bound = first.inputs[i]->shape().sizes();
      for (const ir::Graph* g : all) {
        if (g->inputs.size() != first.inputs.size())
          throw SerializeError(fmt::format("the parts take {} and {} inputs", first.inputs.size(), g->inputs.size()));
        const auto other = g->inputs[i]->shape().sizes();
        if (other.size() != bound.size())
          throw SerializeError(fmt::format("input '{}' has rank {} in one part and {} in another",
                                           first.inputs[i]->name(), bound.size(), other.size()));
        for (size_t d = 0; d < bound.size(); ++d) bound[d] = std::max(bound[d], other[d]);
      }
      plan_.inputs.push_back(cx_.pb.bounded_tensor(first.inputs[i], bound));
    }
    for (size_t i = 0; i < first.outputs.size(); ++i) {
      EtTensor t;
      t.scalar_type = detail::scalar_type(first.outputs[i]);
      const auto sizes = first.outputs[i]->shape().sizes();
      for (int64_t s : sizes) t.sizes.push_back(static_cast<int32_t>(s));
      for (const ir::Graph* g : all) {
        if (g->outputs.size() != first.outputs.size())
          throw SerializeError(fmt::format("the branches give {} and {} outputs", first.outputs.size(), g->outputs.size()));
        const auto other = g->outputs[i]->shape().sizes();
        if (other == sizes) continue;
        t.dynamism = ShapeDynamism::DynamicBound;
        if (other.size() == t.sizes.size())
          for (size_t d = 0; d < other.size(); ++d) t.sizes[d] = std::max(t.sizes[d], static_cast<int32_t>(other[d]));
      }
      plan_.outputs.push_back(cx_.pb.push(std::move(t)));
    }
    jump_always_ = cx_.pb.push(false);
  }

  void emit(const BranchTree& t) {
    if (t.is_leaf()) {
      const std::vector<int32_t> outs = part(t.leaf);
      for (size_t i = 0; i < outs.size(); ++i) plan_.instructions.emplace_back(MoveCall{outs[i], plan_.outputs[i]});
      return;
    }
    if (!t.shape_tests.empty()) {
      shape_tests(t);
      return;
    }
    int32_t cond = -1;
    if (t.condition) {
      const std::vector<int32_t> outs = part(*t.condition);
      const ir::Value* c = t.condition->graph->outputs.size() == 1 ? t.condition->graph->outputs[0] : nullptr;
      if (!c || c->dtype() != ir::DType::Bool || c->shape().numel() != 1)
        throw SerializeError("a branch condition must be one bool");
      cond = outs[0];
    } else {
      if (t.condition_input < 0 || static_cast<size_t>(t.condition_input) >= plan_.inputs.size())
        throw SerializeError(fmt::format("branch condition: the program has no input {}", t.condition_input));
      cond = plan_.inputs[t.condition_input];
    }
    const size_t to_else = plan_.instructions.size();
    plan_.instructions.emplace_back(JumpFalseCall{cond, 0});
    emit(*t.then_branch);
    const size_t to_end = plan_.instructions.size();
    plan_.instructions.emplace_back(JumpFalseCall{jump_always_, 0});
    std::get<JumpFalseCall>(plan_.instructions[to_else]).destination = static_cast<int32_t>(plan_.instructions.size());
    emit(*t.else_branch);
    std::get<JumpFalseCall>(plan_.instructions[to_end]).destination = static_cast<int32_t>(plan_.instructions.size());
  }

 private:
  // Each test reads the input's size (aten::sym_size.int) and compares it
  // (executorch_prim::eq.Scalar); the first that fails jumps to the else branch, or past the
  // program's end when there is none.
  void shape_tests(const BranchTree& t) {
    const int32_t sym_size = op("aten::sym_size", "int"), eq = op("executorch_prim::eq", "Scalar");
    std::vector<size_t> to_else;
    for (const ShapeTest& test : t.shape_tests) {
      if (test.input < 0 || static_cast<size_t>(test.input) >= plan_.inputs.size())
        throw SerializeError(fmt::format("shape test: the program has no input {}", test.input));
      const int32_t size = cx_.pb.push(int64_t{0}), same = cx_.pb.push(false);
      plan_.instructions.emplace_back(
          KernelCall{sym_size, {plan_.inputs[test.input], cx_.pb.push(int64_t{test.axis}), size}});
      plan_.instructions.emplace_back(KernelCall{eq, {size, cx_.pb.push(test.size), same}});
      to_else.push_back(plan_.instructions.size());
      plan_.instructions.emplace_back(JumpFalseCall{same, 0});
    }
    emit(*t.then_branch);
    const size_t to_end = plan_.instructions.size();
    plan_.instructions.emplace_back(JumpFalseCall{jump_always_, 0});
    for (size_t at : to_else)
      std::get<JumpFalseCall>(plan_.instructions[at]).destination = static_cast<int32_t>(plan_.instructions.size());
    if (t.else_branch) {
      emit(*t.else_branch);
    } else {
      // No variant takes these sizes: a jump on a None value, which ExecuTorch's runtime (and
      // vkc's) refuses as it runs, so execute() returns an error instead of stale outputs.
      plan_.instructions.emplace_back(JumpFalseCall{cx_.pb.push(EtNull{}), 0});
      std::get<JumpFalseCall>(plan_.instructions.back()).destination = static_cast<int32_t>(plan_.instructions.size());
    }
    std::get<JumpFalseCall>(plan_.instructions[to_end]).destination = static_cast<int32_t>(plan_.instructions.size());
  }

  int32_t op(const char* name, const char* overload) {
    auto [it, fresh] = cx_.operator_index.try_emplace({name, overload}, static_cast<int32_t>(plan_.operators.size()));
    if (fresh) plan_.operators.push_back({name, overload});
    return it->second;
  }

  // One part: its graph inputs are the plan's inputs (matched by position, name and type).
  std::vector<int32_t> part(const ProgramPart& p) {
    const auto& ins = p.graph->inputs;
    if (ins.size() != plan_.inputs.size())
      throw SerializeError(fmt::format("a branch takes {} inputs, the program {}", ins.size(), plan_.inputs.size()));
    for (size_t i = 0; i < ins.size(); ++i) {
      const auto& t = std::get<EtTensor>(plan_.values[plan_.inputs[i]]);
      const auto sizes = ins[i]->shape().sizes();
      bool fits = sizes.size() == t.sizes.size() && detail::scalar_type(ins[i]) == t.scalar_type;
      for (size_t d = 0; fits && d < sizes.size(); ++d)
        fits = t.dynamism == ShapeDynamism::Static ? sizes[d] == t.sizes[d] : sizes[d] <= t.sizes[d];
      if (!fits) throw SerializeError(fmt::format("input '{}' differs between the branches", ins[i]->name()));
      cx_.pb.bind(ins[i], plan_.inputs[i]);
    }
    return detail::emit_part(cx_, *p.graph, *p.partition);
  }

  PartContext& cx_;
  ExecutionPlan& plan_;
  int32_t jump_always_ = -1;
};

}  // namespace

Program build_branching_program(const BranchTree& tree, const CompileOptions& options, bool cpu_fallback,
                                ShaderEmbedding* shaders) {
  Program program;
  PartContext cx(program, options, cpu_fallback, shaders);
  BranchEmitter emitter(cx);
  emitter.declare(tree);
  emitter.emit(tree);
  detail::finish_program(cx, *leaves(tree).front());
  return program;
}

}  // namespace vkc::serializer
