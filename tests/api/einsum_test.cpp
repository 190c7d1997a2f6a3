// Einsum as Transpose/Reshape/ReduceSum/MatMul (decompose-einsum): each equation compiles fully
// delegated and equals a direct evaluation of the sum over every letter, on cpu and on Vulkan.
#include <gtest/gtest.h>

#include <map>

#include "api_test_support.h"
#include "vkc/runtime/vulkan.h"

namespace vkc::test {
namespace {

struct Case {
  std::string equation;
  std::vector<std::vector<int64_t>> shapes;
  std::vector<int64_t> out_shape;
};

// The output letters of an equation (explicit, or the implicit form's once-occurring letters, sorted).
std::pair<std::vector<std::string>, std::string> letters(const std::string& eq) {
  const auto arrow = eq.find("->");
  const std::string lhs = eq.substr(0, arrow);
  std::vector<std::string> ins(1);
  for (char c : lhs) {
    if (c == ',')
      ins.emplace_back();
    else
      ins.back().push_back(c);
  }
  std::string out;
  if (arrow != std::string::npos) {
    out = eq.substr(arrow + 2);
  } else {
    for (char c : lhs)
      if (c != ',' && std::count(lhs.begin(), lhs.end(), c) == 1) out += c;
    std::sort(out.begin(), out.end());
  }
  return {ins, out};
}

// out[o] = sum over all letters' values consistent with o of the product of the operands.
std::vector<double> reference(const Case& c, const std::vector<std::vector<float>>& xs) {
  const auto [ins, out] = letters(c.equation);
  std::map<char, int64_t> size;
  std::string all;
  for (size_t i = 0; i < ins.size(); ++i)
    for (size_t d = 0; d < ins[i].size(); ++d) {
      if (!size.count(ins[i][d])) all += ins[i][d];
      size[ins[i][d]] = c.shapes[i][d];
    }
  int64_t out_n = 1, total = 1;
  for (char ch : out) out_n *= size[ch];
  for (char ch : all) total *= size[ch];
  std::vector<double> y(static_cast<size_t>(out_n), 0.0);
  std::map<char, int64_t> at;
  for (int64_t flat = 0; flat < total; ++flat) {
    int64_t rest = flat;
    for (auto it = all.rbegin(); it != all.rend(); ++it) {
      at[*it] = rest % size[*it];
      rest /= size[*it];
    }
    auto index = [&](const std::string& ls) {
      int64_t k = 0;
      for (char ch : ls) k = k * size[ch] + at[ch];
      return k;
    };
    double p = 1.0;
    for (size_t i = 0; i < ins.size(); ++i) p *= xs[i][static_cast<size_t>(index(ins[i]))];
    y[static_cast<size_t>(index(out))] += p;
  }
  return y;
}

std::vector<uint8_t> einsum_model(const Case& c) {
  ModelBuilder b(8, 13);
  std::vector<std::string> names;
  for (size_t i = 0; i < c.shapes.size(); ++i) {
    names.push_back("x" + std::to_string(i));
    b.input(names.back(), kF32, std::vector<DimSpec>(c.shapes[i].begin(), c.shapes[i].end()));
  }
  b.output("y", kF32, std::vector<DimSpec>(c.out_shape.begin(), c.out_shape.end()));
  attr_string(b.node("Einsum", names, {"y"}, "einsum"), "equation", c.equation);
  return b.bytes();
}

const std::vector<Case> kCases = {
    {"bhid,bhjd->bhij", {{1, 2, 3, 8}, {1, 2, 5, 8}}, {1, 2, 3, 5}},  // attention scores
    {"bhij,bhjd->bhid", {{1, 2, 3, 5}, {1, 2, 5, 8}}, {1, 2, 3, 8}},  // attention values
    {"bij,bjk->bik", {{2, 3, 4}, {2, 4, 5}}, {2, 3, 5}},
    {"ij,jk", {{3, 4}, {4, 5}}, {3, 5}},           // implicit output "ik"
    {"ij->ji", {{3, 4}}, {4, 3}},                  // transpose
    {"ijk->ki", {{2, 3, 4}}, {4, 2}},              // sum over j, then transpose
    {"i,i->", {{6}, {6}}, {}},                     // inner product
    {"i,j->ij", {{3}, {4}}, {3, 4}},               // outer product
    {"bn,anm,bm->ba", {{2, 3}, {4, 3, 5}, {2, 5}}, {2, 4}},  // three operands: left alone (below)
    {"abc,cd->dba", {{2, 3, 4}, {4, 5}}, {5, 3, 2}},
    {"ijk,jl->li", {{2, 3, 4}, {3, 5}}, {5, 2}},  // k summed away in the first operand alone
};

TEST(Einsum, EquationsCompileFullyDelegatedAndMatchADirectSum) {
  const bool vulkan = !runtime::vulkan_device_name().empty();
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.equation);
    const CompileResult r = compile(einsum_model(c), fs::path(), CompileOptions{});
    if (c.shapes.size() > 2) {  // not decomposed: reported as the operator it is
      ASSERT_FALSE(r);
      EXPECT_NE(r.error().find("Einsum"), std::string::npos) << r.error();
      continue;
    }
    ASSERT_TRUE(r) << r.error();
    EXPECT_EQ(r.partition.rejected, 0u);
    std::vector<std::vector<float>> xs;
    std::vector<Tensor> ins;
    for (size_t i = 0; i < c.shapes.size(); ++i) {
      int64_t n = 1;
      for (int64_t d : c.shapes[i]) n *= d;
      xs.push_back(normal_floats(static_cast<size_t>(n), static_cast<uint32_t>(7 + i)));
      ins.push_back(Tensor::of(ir::DType::Float32, c.shapes[i], xs.back()));
    }
    const std::vector<double> want = reference(c, xs);
    std::vector<std::string> backends = {"cpu"};
    if (vulkan) backends.push_back("vulkan");
    for (const std::string& backend : backends) {
      RunOptions o;
      o.backend = backend;
      const RunResult out = vkc::run(r.pte, ins, o);
      ASSERT_TRUE(out) << backend << ": " << describe(out.diagnostics);
      ASSERT_EQ(out.outputs.at(0).shape, c.out_shape) << backend;
      for (size_t i = 0; i < want.size(); ++i)
        EXPECT_NEAR(out.outputs.at(0).get_f(static_cast<int64_t>(i)), want[i], 1e-4) << backend << " " << i;
    }
  }
}

}  // namespace
}  // namespace vkc::test
