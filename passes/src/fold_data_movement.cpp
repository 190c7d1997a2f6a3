// Runtime data movement that computes nothing, folded: a permute_copy of a permute_copy is one
// permute (none when the two cancel: fusions that take [B, S, H, D] beside operators written for
// [B, H, S, D] leave such pairs on both sides of them), a view_copy of a view_copy is one view, a
// permute that moves only dims of size 1 (a decode step's S = 1) keeps the element order and is a
// view, and a view or permute that changes nothing is its input. Each rewrite makes the node read
// the chain's source; a node left unread goes in eliminate-dead-code. Identical movements of one
// value (the rotary tables' views in every layer) are then made once. On the GPU each of these is
// a dispatch that copies a tensor, and a decode step has several per layer. Under --dim ranges
// (PassContext::sizes_resize) only the rewrites that hold at every size run: chains compose, a
// permute that composes to the identity goes, identical permutes merge.
#include <map>
#include <numeric>
#include <tuple>

#include "vkc/passes/passes.h"

namespace vkc::passes {
namespace {
constexpr std::string_view kPermute = "aten.permute_copy.default";
constexpr std::string_view kView = "aten.view_copy.default";

// The node's permutation with negative dims made positive; empty when malformed.
std::vector<int64_t> perm_of(const ir::Node* n) {
  std::vector<int64_t> p = n->attr_ints("dims");
  const auto rank = static_cast<int64_t>(n->input(0)->shape().rank());
  if (static_cast<int64_t>(p.size()) != rank) return {};
  std::vector<bool> seen(p.size(), false);
  for (int64_t& d : p) {
    if (d < 0) d += rank;
    if (d < 0 || d >= rank || seen[static_cast<size_t>(d)]) return {};
    seen[static_cast<size_t>(d)] = true;
  }
  return p;
}

// Whether a permutation of `in` keeps the row-major element order: the dims it moves past each
// other are all of size 1 (a dim of unknown size counts as larger).
bool keeps_order(const std::vector<int64_t>& perm, const ir::Shape& in) {
  int64_t last = -1;
  for (int64_t d : perm) {
    const ir::Dim& dim = in.dims[static_cast<size_t>(d)];
    if (dim.is_static() && *dim.value == 1) continue;
    if (d < last) return false;
    last = d;
  }
  return true;
}

bool is_identity(const std::vector<int64_t>& perm) {
  for (size_t i = 0; i < perm.size(); ++i)
    if (perm[i] != static_cast<int64_t>(i)) return false;
  return true;
}
}  // namespace

void fold_data_movement(ir::Graph& g, PassContext& ctx) {
  const bool by_size = !ctx.sizes_resize;  // decisions that read sizes may differ between sizes
  for (ir::Node* n : g.nodes()) {
    const bool permute = n->is(ir::kVulkanDomain, kPermute), view = n->is(ir::kVulkanDomain, kView);
    if (!permute && !view) continue;
    ir::Value* out = n->output(0);
    if (!n->input(0) || !out->type().known()) continue;
    if (permute) {
      std::vector<int64_t> perm = perm_of(n);
      if (perm.empty()) continue;
      // permute(permute(x, inner), perm) = permute(x, inner o perm).
      while (ir::Node* p = n->input(0)->producer()) {
        if (!p->is(ir::kVulkanDomain, kPermute)) break;
        const std::vector<int64_t> inner = perm_of(p);
        if (inner.empty()) break;
        std::vector<int64_t> composed(perm.size());
        for (size_t i = 0; i < perm.size(); ++i) composed[i] = inner[static_cast<size_t>(perm[i])];
        perm = std::move(composed);
        n->set_input(0, p->input(0));
      }
      n->set_attr("dims", perm);
      if (by_size && keeps_order(perm, n->input(0)->shape()) && out->shape().is_static())
        n->morph(ir::kVulkanDomain, kView, {n->input(0)}, {{"size", out->shape().sizes()}});
    }
    if (n->is(ir::kVulkanDomain, kView)) {
      // view(view(x)) = view(x): a view is the row-major order read in another shape.
      while (ir::Node* p = n->input(0)->producer()) {
        if (!p->is(ir::kVulkanDomain, kView)) break;
        n->set_input(0, p->input(0));
      }
    }
    ir::Value* in = n->input(0);
    const bool changes_nothing = n->is(ir::kVulkanDomain, kView) ? by_size && in->type() == out->type()
                                                                 : is_identity(perm_of(n)) && in->type() == out->type();
    if (changes_nothing && !g.is_output(out)) {
      g.replace_all_uses(out, in);
      g.remove_node(n);
    }
  }
  // The same movement of one value, made once.
  std::map<std::tuple<const ir::Value*, std::string, std::vector<int64_t>>, ir::Value*> made;
  for (ir::Node* n : g.nodes()) {
    const bool permute = n->is(ir::kVulkanDomain, kPermute), view = n->is(ir::kVulkanDomain, kView);
    if ((!permute && !(view && by_size)) || g.is_output(n->output(0))) continue;
    auto key = std::make_tuple(n->input(0), n->op_type(), n->attr_ints(permute ? "dims" : "size"));
    auto [it, fresh] = made.emplace(std::move(key), n->output(0));
    if (fresh || it->second->type() != n->output(0)->type()) continue;
    g.replace_all_uses(n->output(0), it->second);
    g.remove_node(n);
  }
}

}  // namespace vkc::passes
