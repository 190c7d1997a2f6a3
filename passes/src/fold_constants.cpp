// Evaluates ONNX nodes whose inputs are all constants with the CPU reference
// kernels, so that shape subgraphs (Shape -> Gather -> Concat -> Reshape, Range,
// ConstantOfShape, ...) disappear once input shapes are static. Shape and Size
// only need their input's static shape.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>

#include "folding/folders.h"
#include "folding/ill_formed_branches.h"
#include "vkc/passes/passes.h"

namespace vkc::passes {
namespace {

// Folding may create a constant this much larger than its inputs, in elements; beyond,
// the node stays (an Expand of a scalar to a huge tensor is cheaper computed than stored).
constexpr int64_t kMaxGrowth = 1 << 20;

bool shape_only(const ir::Node& n) { return n.is_onnx("Shape") || n.is_onnx("Size"); }

std::optional<folding::Inputs> constant_inputs(const ir::Node& n, int64_t& total) {
  folding::Inputs ins;
  for (const ir::Value* v : n.inputs()) {
    if (!v) {
      ins.emplace_back(std::nullopt);
      continue;
    }
    if (!v->type().known() || !v->shape().is_static()) return std::nullopt;
    if (!v->is_constant() && !shape_only(n)) return std::nullopt;
    kernels::HostTensor t{v->dtype(), v->shape().sizes(), v->is_constant() ? v->data() : ir::TensorData{}};
    total += t.numel();
    ins.emplace_back(std::move(t));
  }
  return ins;
}

}  // namespace

namespace {

// Why node `n` (with a folder) did not fold: its first input that is not a constant of static shape.
std::string why_not_folded(const ir::Graph& g, const ir::Node& n) {
  for (const ir::Value* v : n.inputs()) {
    if (!v) continue;
    if (!v->type().known() || !v->shape().is_static())
      return fmt::format("input '{}' has no static shape ({})", v->name(), v->type().str());
    if (v->is_constant() || shape_only(n)) continue;
    if (g.is_input(v)) return fmt::format("it reads graph input '{}'", v->name());
    const ir::Node* p = v->producer();
    return p ? fmt::format("input '{}' is computed at run time by node '{}' ({})", v->name(), p->name(), p->op_type())
             : fmt::format("input '{}' is not a constant", v->name());
  }
  return "";
}

// One sweep; returns whether any node was folded.
// vkc::IfSelect(cond, then_value, else_value), an If output whose branches differ in type or shape
// (onnx_graph_builder.cpp): once the condition is a constant, the output is the taken branch's
// value (through an Identity where the output is a graph output, which keeps its name).
bool resolve_if_select(ir::Graph& g, ir::Node* n) {
  const ir::Value* cond = n->input(0);
  if (!cond || !cond->is_constant() || !cond->shape().is_static() || cond->shape().numel() != 1) return false;
  const kernels::HostTensor c{cond->dtype(), cond->shape().sizes(), cond->data()};
  ir::Value* taken = n->input(c.get_f(0) != 0 ? 1 : 2);
  if (g.is_output(n->output(0))) {
    n->output(0)->set_type(taken->type());
    n->morph(ir::kOnnxDomain, "Identity", {taken}, {});
    n->set_opset(13);
    return true;
  }
  g.replace_all_uses(n->output(0), taken);
  g.remove_node(n);
  return true;
}

// Where(cond, x, y) whose constant condition is all true (or all false) and whose chosen side
// already has the output's type: that side, with no select. An If inlined by predication over a
// folded condition leaves this, and the untaken branch then dies (it may not even be computable
// for the inputs given: Silero VAD's 8 kHz branch fed 16 kHz frames).
bool resolve_constant_where(ir::Graph& g, ir::Node* n) {
  const ir::Value* cond = n->input(0);
  if (n->num_inputs() != 3 || !cond || !cond->is_constant() || !cond->shape().is_static() || cond->shape().numel() < 1)
    return false;
  const kernels::HostTensor c{cond->dtype(), cond->shape().sizes(), cond->data()};
  const bool first = c.get_f(0) != 0;
  for (int64_t i = 1; i < c.numel(); ++i)
    if ((c.get_f(i) != 0) != first) return false;
  ir::Value* taken = n->input(first ? 1 : 2);
  ir::Value* out = n->output(0);
  if (!taken || !out->type().known() || !out->shape().is_static() || taken->type() != out->type()) return false;
  if (g.is_output(out)) {
    if (taken->is_constant() || g.is_input(taken)) return false;  // left to folding / kept as a Where
    n->morph(ir::kOnnxDomain, "Identity", {taken}, {});
    n->set_opset(13);
    return true;
  }
  g.replace_all_uses(out, taken);
  g.remove_node(n);
  return true;
}

bool fold_once(ir::Graph& g, std::map<std::string, std::string>& capped) {
  bool folded = false;
  for (ir::Node* n : g.nodes()) {
    if (n->is(ir::kVkcDomain, "IfSelect")) {
      folded = resolve_if_select(g, n) || folded;
      continue;
    }
    if (n->is_onnx("Where") && resolve_constant_where(g, n)) {
      folded = true;
      continue;
    }
    if (n->domain() != ir::kOnnxDomain) continue;
    folding::FoldFn fold = folding::find_folder(n->op_type());
    if (!fold) continue;
    int64_t input_elements = 0;
    auto ins = constant_inputs(*n, input_elements);
    if (!ins || (ins->empty() && !n->is_onnx("Shape"))) continue;
    std::vector<kernels::HostTensor> outs;
    try {
      // The growth cap holds while the kernel allocates, not only after: a Range or
      // ConstantOfShape whose arguments claim terabytes fails fast and stays unfolded.
      const kernels::AllocationLimit limit(static_cast<uint64_t>(input_elements + kMaxGrowth) * 16);
      outs = fold(*n, *ins);
    } catch (const kernels::KernelError& e) {
      capped[n->name()] = e.what();  // left for lowering, which reports what it cannot do
      continue;
    }
    if (outs.size() != n->outputs().size()) continue;
    int64_t output_elements = 0;
    for (const auto& o : outs) output_elements += o.numel();
    if (output_elements > input_elements + kMaxGrowth) {
      capped[n->name()] = fmt::format("folding would store {} elements from {} (the cap is {} more)", output_elements,
                                      input_elements, kMaxGrowth);
      continue;
    }
    for (size_t i = 0; i < outs.size(); ++i) {
      ir::Value* v = n->output(i);
      const ir::TensorType type{outs[i].dtype, ir::Shape::of(outs[i].shape)};
      if (v->type().known() && v->shape().is_static() && v->type() != type)
        throw std::runtime_error(fmt::format("node '{}' ({}): folded to {}, but shape inference said {}", n->name(),
                                             n->op_type(), type.str(), v->type().str()));
      v->set_type(type);
    }
    g.remove_node(n);  // detaches the outputs, which now become constants
    for (size_t i = 0; i < outs.size(); ++i) n->output(i)->set_data(outs[i].data);
    folded = true;
  }
  return folded;
}

}  // namespace

void fold_constants(ir::Graph& g, PassContext& ctx) {
  // Folding makes shape arguments constant, which gives outputs downstream static
  // shapes, which lets Shape nodes fold in turn: repeat until nothing changes.
  // An If branch that cannot run with the compiled input shapes (an operator's contract broken,
  // as Silero VAD's 8 kHz branch fed 16 kHz frames) fails for every input, in onnxruntime too:
  // the other branch is taken, and folding goes on from there.
  std::map<std::string, std::string> capped, contradictions;
  for (int resolved = 0; resolved < 64; ++resolved) {
    for (int round = 0; round < 64; ++round) {
      const bool folded = fold_once(g, capped);
      const bool shaped = propagate_shapes(g, &contradictions);
      if (!folded && !shaped) break;
    }
    if (!folding::take_well_formed_branches(g, contradictions, ctx.notes)) break;
  }
  // An If whose condition stays unknown, over branches that turned out alike: a Where per element
  // (predication), exact since both branches are computed. A resolved If leaves its untaken
  // branch unused: drop it now, before lowering looks at its nodes.
  for (ir::Node* n : g.nodes()) {
    if (!n->is(ir::kVkcDomain, "IfSelect")) continue;
    const ir::Value* a = n->input(1);
    const ir::Value* b = n->input(2);
    if (!a->type().known() || !b->type().known() || a->type() != b->type() || !a->shape().is_static()) continue;
    n->output(0)->set_type(a->type());
    n->morph(ir::kOnnxDomain, "Where", {n->input(0), n->input(1), n->input(2)}, {});
    n->set_opset(16);
  }
  eliminate_dead_code(g, ctx);
  // What stays: shape and integer arithmetic (integer or boolean outputs) left to run time, with why.
  for (const ir::Node* n : g.nodes()) {
    if (n->is(ir::kVkcDomain, "IfSelect")) {
      // The one-element graph inputs (flags, rates) the condition is computed from: binding one
      // fixes the branch.
      std::vector<const ir::Value*> todo{n->input(0)};
      std::set<const ir::Value*> seen{n->input(0)};
      std::vector<std::string> inputs;
      while (!todo.empty() && seen.size() < 4096) {
        const ir::Value* v = todo.back();
        todo.pop_back();
        if (g.is_input(v) && v->shape().is_static() && v->shape().numel() <= 1) inputs.push_back(v->name());
        if (const ir::Node* p = v->producer())
          for (const ir::Value* in : p->inputs())
            if (in && !in->is_constant() && seen.insert(in).second) todo.push_back(in);
      }
      std::sort(inputs.begin(), inputs.end());
      ctx.not_folded[n->name()] =
          inputs.empty()
              ? "an If whose branches differ in type or shape needs a condition known at compile time (an input "
                "it reads can be bound with --input-value NAME=V)"
              : fmt::format("an If whose branches differ in type or shape needs a condition known at compile time; "
                            "it comes from input {}: bind it with --input-value {}=V",
                            fmt::join(inputs, ", "), inputs.front());
      continue;
    }
    if (n->domain() != ir::kOnnxDomain || !folding::find_folder(n->op_type()) || n->outputs().empty()) continue;
    const ir::DType t = n->output(0)->dtype();
    const bool makes_tensors = n->is_onnx("ConstantOfShape") || n->is_onnx("Range") || n->is_onnx("NonZero");
    if (!shape_only(*n) && !makes_tensors && (t == ir::DType::Undefined || ir::is_float(t))) continue;
    if (auto it = capped.find(n->name()); it != capped.end()) ctx.not_folded[n->name()] = it->second;
    else if (std::string why = why_not_folded(g, *n); !why.empty()) ctx.not_folded[n->name()] = why;
  }
}

}  // namespace vkc::passes
