#include "branch_programs.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "vkc/compiler/driver.h"

namespace vkc::compiler::detail {

void bind_conditions(ir::Graph& g, const Bindings& bindings) {
  for (const auto& [name, taken] : bindings) {
    ir::Value* v = g.find_value(name);
    if (!v) throw CompileError(fmt::format("If condition '{}' is not in the model as imported", name));
    const ir::Shape shape = v->shape().is_static() && v->shape().numel() == 1 ? v->shape() : ir::Shape::of({});
    ir::Value* c = g.add_constant(g.unique_name(name + "_bound"), ir::TensorType{ir::DType::Bool, shape},
                                  ir::TensorData::owned(std::vector<uint8_t>{static_cast<uint8_t>(taken)}));
    g.replace_all_uses(v, c);
  }
}

ir::Value* condition_output(ir::Graph& g, ir::Value* cond) {
  const std::vector<int64_t> one{1};
  ir::Value* shape = g.add_constant(g.unique_name(cond->name() + "_shape"), ir::TensorType{ir::DType::Int64, ir::Shape::of({1})},
                                    ir::TensorData::owned(std::vector<uint8_t>(reinterpret_cast<const uint8_t*>(one.data()),
                                                                               reinterpret_cast<const uint8_t*>(one.data()) + 8)));
  ir::Node* n = g.add_node(ir::kOnnxDomain, "Reshape", {cond, shape}, {ir::TensorType{ir::DType::Bool, ir::Shape::of({1})}},
                           g.unique_name(cond->name() + "_as_1d"));
  n->set_opset(14);
  return n->output(0);
}

std::map<std::string, std::string> if_conditions(const ir::Graph& g) {
  std::map<std::string, std::string> out;
  for (const ir::Node* n : g.nodes())
    if (n->is(ir::kVkcDomain, "IfSelect") && n->input(0)) out[n->name()] = n->input(0)->name();
  return out;
}

namespace {

// How many nodes compute `v` (its cone), up to `cap`.
size_t cone_size(const ir::Value* v, size_t cap) {
  std::vector<const ir::Node*> todo;
  std::set<const ir::Node*> seen;
  if (v->producer()) todo.push_back(v->producer());
  while (!todo.empty() && seen.size() < cap) {
    const ir::Node* n = todo.back();
    todo.pop_back();
    if (!seen.insert(n).second) continue;
    for (const ir::Value* in : n->inputs())
      if (in && in->producer()) todo.push_back(in->producer());
  }
  return seen.size();
}

}  // namespace

std::vector<std::string> open_conditions(const ir::Graph& g, const std::map<std::string, std::string>& conditions) {
  // Outer Ifs first (binding one drops the Ifs inside its untaken branch), then the cheapest
  // condition (a flag or a rate compared with a constant) before one computed from many nodes,
  // whose cone may only be well formed once another is bound.
  std::vector<std::pair<std::pair<int64_t, size_t>, std::string>> found;
  for (const ir::Node* n : g.nodes()) {
    if (!n->is(ir::kVkcDomain, "IfSelect")) continue;
    auto it = conditions.find(n->name());
    if (it == conditions.end()) continue;
    if (std::none_of(found.begin(), found.end(), [&](const auto& f) { return f.second == it->second; }))
      found.emplace_back(std::pair{n->attr_int("nesting", 0), cone_size(n->input(0), 100000)}, it->second);
  }
  std::stable_sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::string> out;
  for (auto& f : found) out.push_back(std::move(f.second));
  return out;
}

namespace {

class Splitter {
 public:
  Splitter(Split& s, const PartCompiler& compile) : s_(s), compile_(compile) {}

  std::unique_ptr<serializer::BranchTree> tree(const Part& part, const Bindings& bindings) {
    auto t = std::make_unique<serializer::BranchTree>();
    if (part.open_conditions.empty()) {
      t->leaf = {part.graph.get(), &part.partition};
      s_.leaves.push_back(&part);
      if (s_.leaves.size() > kMaxBranchPrograms)
        throw CompileError(fmt::format("run-time Ifs over branches of different shapes need more than {} programs "
                                       "(conditions: {}); bind some with --input-value",
                                       kMaxBranchPrograms, fmt::join(s_.conditions, ", ")));
      return t;
    }
    const std::string& cond = part.open_conditions.front();
    if (std::find(s_.conditions.begin(), s_.conditions.end(), cond) == s_.conditions.end())
      s_.conditions.push_back(cond);
    const auto& inputs = part.graph->inputs;
    auto input = std::find_if(inputs.begin(), inputs.end(), [&](const ir::Value* v) { return v->name() == cond; });
    if (input != inputs.end()) {
      t->condition_input = static_cast<int>(input - inputs.begin());
    } else {
      const Part& c = keep(compile_as(bindings, &cond, ""));
      s_.condition_parts.push_back(&c);
      t->condition = serializer::ProgramPart{c.graph.get(), &c.partition};
    }
    for (const bool taken : {true, false}) {
      Bindings b = bindings;
      b[cond] = taken;
      const Part& branch = keep(compile_as(b, nullptr, fmt::format("with If condition '{}' {}", cond, taken)));
      if (std::find(branch.open_conditions.begin(), branch.open_conditions.end(), cond) != branch.open_conditions.end())
        throw CompileError(fmt::format("binding If condition '{}' did not resolve its If", cond));
      (taken ? t->then_branch : t->else_branch) = tree(branch, b);
    }
    return t;
  }

 private:
  // A compile failure names the branch it was compiling.
  Part compile_as(const Bindings& b, const std::string* output, const std::string& context) {
    try {
      return compile_(b, output);
    } catch (const CompileError& e) {
      if (context.empty()) throw;
      throw CompileError(fmt::format("{}: {}", context, e.what()));
    }
  }

  const Part& keep(Part p) {
    s_.parts.push_back(std::make_unique<Part>(std::move(p)));
    return *s_.parts.back();
  }
  Split& s_;
  const PartCompiler& compile_;
};

}  // namespace

Split split_on_conditions(const Part& root, const PartCompiler& compile) {
  Split s;
  s.tree = Splitter(s, compile).tree(root, {});
  return s;
}

}  // namespace vkc::compiler::detail
