#include "size_variants.h"

#include <fmt/format.h>

#include <algorithm>

#include "vkc/compiler/driver.h"

namespace vkc::compiler::detail {

std::vector<DimSizes> size_combinations(const std::map<std::string, std::vector<int64_t>>& sizes) {
  std::vector<DimSizes> out{{}};
  for (const auto& [name, values] : sizes) {
    std::vector<DimSizes> next;
    for (const DimSizes& partial : out)
      for (int64_t v : values) {
        DimSizes d = partial;
        d[name] = v;
        next.push_back(std::move(d));
      }
    out = std::move(next);
    if (out.size() > kMaxBranchPrograms)
      throw CompileError(fmt::format("--dim: the sizes listed make {} or more combinations; one program holds at most {}",
                                     out.size(), kMaxBranchPrograms));
  }
  return out;
}

std::string describe(const DimSizes& dims) {
  std::string s;
  for (const auto& [name, v] : dims) s += fmt::format("{}{}={}", s.empty() ? "" : ", ", name, v);
  return s;
}

namespace {

// The input shapes of a variant (every program of one variant takes the same).
std::vector<std::vector<int64_t>> input_shapes(const Split& s) {
  std::vector<std::vector<int64_t>> out;
  for (const ir::Value* v : s.leaves.front()->graph->inputs) out.push_back(v->shape().sizes());
  return out;
}

std::unique_ptr<serializer::BranchTree> tree_of(Split& s) {
  if (s.tree) return std::move(s.tree);
  auto t = std::make_unique<serializer::BranchTree>();
  t->leaf = {s.leaves.front()->graph.get(), &s.leaves.front()->partition};
  return t;
}

}  // namespace

Split join_size_variants(std::vector<Split> variants, const std::vector<DimSizes>& combinations) {
  std::vector<std::vector<std::vector<int64_t>>> shapes;
  for (const Split& v : variants) shapes.push_back(input_shapes(v));
  // The (input, axis) positions whose size differs between the variants.
  std::vector<std::pair<int, int>> differ;
  for (size_t i = 0; i < shapes.front().size(); ++i)
    for (size_t a = 0; a < shapes.front()[i].size(); ++a)
      for (const auto& s : shapes)
        if (s.size() != shapes.front().size() || s[i].size() != shapes.front()[i].size())
          throw CompileError("the variants of different dim sizes take different inputs");
        else if (s[i][a] != shapes.front()[i][a]) {
          differ.emplace_back(static_cast<int>(i), static_cast<int>(a));
          break;
        }
  for (size_t k = 0; k < shapes.size(); ++k)
    for (size_t j = 0; j < k; ++j)
      if (shapes[j] == shapes[k])
        throw CompileError(fmt::format("--dim: {} and {} give the same input shapes", describe(combinations[j]),
                                       describe(combinations[k])));
  Split out;
  std::unique_ptr<serializer::BranchTree>* slot = &out.tree;
  for (size_t k = 0; k < variants.size(); ++k) {
    Split& v = variants[k];
    auto node = std::make_unique<serializer::BranchTree>();
    for (const auto& [input, axis] : differ) node->shape_tests.push_back({input, axis, shapes[k][input][axis]});
    node->then_branch = tree_of(v);
    for (auto& p : v.parts) out.parts.push_back(std::move(p));
    out.leaves.insert(out.leaves.end(), v.leaves.begin(), v.leaves.end());
    out.condition_parts.insert(out.condition_parts.end(), v.condition_parts.begin(), v.condition_parts.end());
    for (const std::string& c : v.conditions)
      if (std::find(out.conditions.begin(), out.conditions.end(), c) == out.conditions.end()) out.conditions.push_back(c);
    *slot = std::move(node);
    slot = &(*slot)->else_branch;
  }
  if (out.leaves.size() > kMaxBranchPrograms)
    throw CompileError(fmt::format("the dim sizes and run-time Ifs together need {} programs; one holds at most {}",
                                   out.leaves.size(), kMaxBranchPrograms));
  return out;
}

}  // namespace vkc::compiler::detail
