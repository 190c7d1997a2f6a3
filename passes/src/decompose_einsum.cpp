// decompose-einsum: Einsum of one or two operands (explicit "->" or implicit form, no ellipsis,
// each letter at most once per operand) as Transpose / Reshape / ReduceSum / MatMul:
//   - letters of one operand that appear nowhere else are summed away first (ReduceSum);
//   - one operand: a Transpose into the output order;
//   - two operands: letters in both and in the output are batch dims, in both but not the output
//     contracted, in one and the output free. A is laid out [batch, free_a, contracted] and B
//     [batch, contracted, free_b], flattened to rank 3 and multiplied (MatMul), then reshaped to
//     [batch, free_a, free_b] and transposed into the output order.
// Attention written as einsum ("bhid,bhjd->bhij", "bhij,bhjd->bhid"), batched products, inner
// products and transposes all take this path. Other forms stay and are reported.
#include <algorithm>
#include <cctype>
#include <map>
#include <optional>

#include "constants.h"
#include "vkc/passes/passes.h"

namespace vkc::passes {
namespace {

using Ints = std::vector<int64_t>;

struct Term {
  std::string letters;
  ir::Value* value;
};

class Builder {
 public:
  Builder(ir::Graph& g, ir::Node* n) : g_(g), n_(n) {}

  ir::Value* ints(const Ints& v) { return add_i64_constant(g_, n_->name() + "_shape", {int64_t(v.size())}, v); }
  ir::Value* node(const char* op, std::vector<ir::Value*> ins, const Ints& shape, ir::AttributeMap attrs = {}) {
    return add_onnx_node(g_, n_, op, std::move(ins), {n_->output(0)->dtype(), ir::Shape::of(shape)}, std::move(attrs));
  }

  // `t` with its letters reordered to `order` (a permutation of them).
  Term transpose(const Term& t, const std::string& order) {
    if (t.letters == order) return t;
    Ints perm, shape;
    const Ints dims = t.value->shape().sizes();
    for (char c : order) {
      const auto i = static_cast<int64_t>(t.letters.find(c));
      perm.push_back(i);
      shape.push_back(dims[i]);
    }
    return {order, node("Transpose", {t.value}, shape, {{"perm", perm}})};
  }
  // `t` with `letters` summed away (ReduceSum with keepdims 0).
  Term sum(const Term& t, const std::string& letters) {
    if (letters.empty()) return t;
    Ints axes, shape;
    std::string kept;
    const Ints dims = t.value->shape().sizes();
    for (size_t i = 0; i < t.letters.size(); ++i) {
      if (letters.find(t.letters[i]) != std::string::npos) {
        axes.push_back(static_cast<int64_t>(i));
      } else {
        kept += t.letters[i];
        shape.push_back(dims[i]);
      }
    }
    return {kept, node("ReduceSum", {t.value, ints(axes)}, shape, {{"keepdims", int64_t{0}}})};
  }
  ir::Value* reshape(ir::Value* v, const Ints& shape) { return node("Reshape", {v, ints(shape)}, shape); }

 private:
  ir::Graph& g_;
  ir::Node* n_;
};

// Parses "ab,bc->ac" into the operands' letter strings and the output's; nullopt for other forms.
std::optional<std::pair<std::vector<std::string>, std::string>> parse(std::string eq) {
  eq.erase(std::remove(eq.begin(), eq.end(), ' '), eq.end());
  if (eq.find('.') != std::string::npos) return std::nullopt;
  const auto arrow = eq.find("->");
  std::vector<std::string> ins;
  const std::string lhs = eq.substr(0, arrow);
  for (size_t start = 0;;) {
    const auto comma = lhs.find(',', start);
    ins.push_back(lhs.substr(start, comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  std::string out;
  if (arrow != std::string::npos) {
    out = eq.substr(arrow + 2);
  } else {  // implicit form: the letters that occur once, in alphabetical order
    for (char c : lhs)
      if (std::isalpha(static_cast<unsigned char>(c)) && std::count(lhs.begin(), lhs.end(), c) == 1) out += c;
    std::sort(out.begin(), out.end());
  }
  auto unique = [](const std::string& s) {
    std::string t = s;
    std::sort(t.begin(), t.end());
    return std::adjacent_find(t.begin(), t.end()) == t.end() &&
           std::all_of(s.begin(), s.end(), [](char c) { return std::isalpha(static_cast<unsigned char>(c)); });
  };
  for (const auto& s : ins)
    if (!unique(s)) return std::nullopt;
  if (!unique(out)) return std::nullopt;
  return std::pair{ins, out};
}

bool decompose(ir::Graph& g, ir::Node* n) {
  const auto parsed = parse(n->attr_string("equation", ""));
  if (!parsed || parsed->first.size() != n->num_inputs() || n->num_inputs() < 1 || n->num_inputs() > 2) return false;
  const auto& in_letters = parsed->first;  // (no structured binding: lambdas below capture them)
  const auto& out = parsed->second;
  for (size_t i = 0; i < n->num_inputs(); ++i)
    if (!n->input(i) || !n->input(i)->type().known() || !n->input(i)->shape().is_static() ||
        n->input(i)->shape().rank() != in_letters[i].size())
      return false;
  if (!n->output(0)->type().known() || !ir::is_float(n->output(0)->dtype())) return false;
  Builder b(g, n);
  std::vector<Term> terms;
  for (size_t i = 0; i < n->num_inputs(); ++i) terms.push_back({in_letters[i], n->input(i)});
  auto elsewhere = [&](char c, size_t self) {
    if (out.find(c) != std::string::npos) return true;
    for (size_t j = 0; j < terms.size(); ++j)
      if (j != self && terms[j].letters.find(c) != std::string::npos) return true;
    return false;
  };
  for (size_t i = 0; i < terms.size(); ++i) {  // letters only this operand has: summed first
    std::string alone;
    for (char c : terms[i].letters)
      if (!elsewhere(c, i)) alone += c;
    terms[i] = b.sum(terms[i], alone);
  }
  ir::Value* result = nullptr;
  if (terms.size() == 1) {
    if (terms[0].letters.size() != out.size()) return false;
    result = b.transpose(terms[0], out).value;
  } else {
    const Term& ta = terms[0];
    const Term& tb = terms[1];
    std::string batch, contracted, free_a, free_b;
    for (char c : ta.letters) {
      const bool in_b = tb.letters.find(c) != std::string::npos, in_out = out.find(c) != std::string::npos;
      (in_b ? (in_out ? batch : contracted) : free_a) += c;
    }
    for (char c : tb.letters)
      if (ta.letters.find(c) == std::string::npos) free_b += c;
    std::map<char, int64_t> size;
    for (const Term* t : {&ta, &tb})
      for (size_t i = 0; i < t->letters.size(); ++i) size[t->letters[i]] = t->value->shape().sizes()[i];
    auto prod = [&](const std::string& s) {
      int64_t p = 1;
      for (char c : s) p *= size[c];
      return p;
    };
    const Term a = b.transpose(ta, batch + free_a + contracted);
    const Term bb = b.transpose(tb, batch + contracted + free_b);
    const int64_t nb = prod(batch), m = prod(free_a), k = prod(contracted), nn = prod(free_b);
    ir::Value* a3 = b.reshape(a.value, {nb, m, k});
    ir::Value* b3 = b.reshape(bb.value, {nb, k, nn});
    ir::Value* p = b.node("MatMul", {a3, b3}, {nb, m, nn});
    Ints full;
    for (char c : batch + free_a + free_b) full.push_back(size[c]);
    const Term product{batch + free_a + free_b, b.reshape(p, full)};
    if (product.letters.size() != out.size()) return false;
    result = b.transpose(product, out).value;
  }
  g.replace_all_uses(n->output(0), result);
  g.remove_node(n);
  return true;
}

}  // namespace

void decompose_einsum(ir::Graph& g, PassContext&) {
  for (ir::Node* n : g.nodes())
    if (n->is_onnx("Einsum")) decompose(g, n);
}

}  // namespace vkc::passes
