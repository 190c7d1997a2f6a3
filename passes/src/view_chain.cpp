#include "view_chain.h"

#include <random>

#include "constants.h"

namespace vkc::passes {
namespace {

bool is_movement(const ir::Node* n) {
  if (!n || n->domain() != ir::kOnnxDomain) return false;
  for (const char* op : {"Reshape", "Transpose", "Unsqueeze", "Squeeze", "Flatten", "Expand", "Tile", "Identity"})
    if (n->op_type() == op) return true;
  return false;
}

// Whether the node's non-data inputs are constants and its data input and output shapes are static.
bool readable(const ir::Node* n) {
  for (size_t i = 1; i < n->num_inputs(); ++i)
    if (n->input(i) && !n->input(i)->is_constant()) return false;
  const ir::Value *in = n->input(0), *out = n->output(0);
  return in->type().known() && in->shape().is_static() && out->type().known() && out->shape().is_static();
}

std::vector<int64_t> unflat(int64_t f, const std::vector<int64_t>& shape) {
  std::vector<int64_t> idx(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    idx[d] = shape[d] ? f % shape[d] : 0;
    f = shape[d] ? f / shape[d] : 0;
  }
  return idx;
}

int64_t numel(const std::vector<int64_t>& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

// The input element one node's output element `f` reads.
int64_t back_through(const ir::Node* n, int64_t f) {
  const std::vector<int64_t> in = n->input(0)->shape().sizes(), out = n->output(0)->shape().sizes();
  const std::string& op = n->op_type();
  if (op == "Transpose") {
    std::vector<int64_t> perm = n->attr_ints("perm");
    if (perm.empty())
      for (size_t d = in.size(); d-- > 0;) perm.push_back(static_cast<int64_t>(d));
    const auto o = unflat(f, out);
    std::vector<int64_t> i(in.size());
    for (size_t d = 0; d < perm.size(); ++d) i[perm[d]] = o[d];
    return flat_index(i, in);
  }
  if (op == "Expand" || op == "Tile") {
    const auto o = unflat(f, out);
    std::vector<int64_t> i(in.size());
    const size_t lead = out.size() - in.size();
    for (size_t d = 0; d < in.size(); ++d) i[d] = o[d + lead] % in[d];  // broadcast (size 1) and tiling
    return flat_index(i, in);
  }
  return f;  // Reshape, Flatten, (Un)Squeeze, Identity keep the row-major order
}

}  // namespace

int64_t flat_index(const std::vector<int64_t>& idx, const std::vector<int64_t>& shape) {
  int64_t f = 0;
  for (size_t d = 0; d < shape.size(); ++d) f = f * shape[d] + idx[d];
  return f;
}

ViewMap::ViewMap(std::vector<ir::Node*> chain, std::vector<int64_t> source_shape, std::vector<int64_t> out_shape)
    : chain_(std::move(chain)), source_(std::move(source_shape)), out_(std::move(out_shape)) {}

int64_t ViewMap::operator()(int64_t f) const {
  for (const ir::Node* n : chain_) f = back_through(n, f);
  return f;
}

bool ViewMap::equals(const std::function<int64_t(const std::vector<int64_t>&)>& want) const {
  const int64_t total = numel(out_);
  auto check = [&](int64_t f) { return (*this)(f) == want(unflat(f, out_)); };
  if (total <= (int64_t{1} << 16)) {
    for (int64_t f = 0; f < total; ++f)
      if (!check(f)) return false;
    return true;
  }
  // Every position of each axis, the other axes at a few varied values; then random elements.
  std::mt19937_64 rng(0x5eed);
  for (size_t axis = 0; axis < out_.size(); ++axis)
    for (int rep = 0; rep < 4; ++rep) {
      std::vector<int64_t> idx(out_.size());
      for (size_t d = 0; d < out_.size(); ++d)
        idx[d] = rep == 0 ? 0 : rep == 1 ? out_[d] - 1 : static_cast<int64_t>(rng() % static_cast<uint64_t>(out_[d]));
      for (int64_t p = 0; p < out_[axis]; ++p) {
        idx[axis] = p;
        if (!check(flat_index(idx, out_))) return false;
      }
    }
  for (int k = 0; k < 8192; ++k)
    if (!check(static_cast<int64_t>(rng() % static_cast<uint64_t>(total)))) return false;
  return true;
}

ir::Value* find_view_source(const ir::Graph& g, ir::Value* v,
                            const std::function<bool(const ir::Value*, const ViewMap&)>& accept,
                            std::vector<ir::Node*>* chain, int max_steps) {
  if (!v->type().known() || !v->shape().is_static()) return nullptr;
  const std::vector<int64_t> out = v->shape().sizes();
  std::vector<ir::Node*> nodes;  // consumer first
  ir::Value* cur = v;
  for (int step = 0;; ++step) {
    if (cur->type().known() && cur->shape().is_static() && numel(cur->shape().sizes()) > 0) {
      const ViewMap map(nodes, cur->shape().sizes(), out);
      if (accept(cur, map)) {
        if (chain) *chain = std::vector<ir::Node*>(nodes.rbegin(), nodes.rend());
        return cur;
      }
    }
    if (step >= max_steps) return nullptr;
    ir::Node* p = cur->producer();
    if (!is_movement(p) || !readable(p)) return nullptr;
    // Intermediate values must be used only by the chain (the start value may be used elsewhere).
    if (cur != v && (g.is_output(cur) || g.users(cur).size() != 1)) return nullptr;
    nodes.push_back(p);
    cur = p->input(0);
  }
}

}  // namespace vkc::passes
