#include "view_chain.h"

#include <algorithm>
#include <cstring>

#include "folding/folders.h"

namespace vkc::passes {
namespace {

bool is_movement(const ir::Node* n) {
  if (!n || n->domain() != ir::kOnnxDomain) return false;
  for (const char* op : {"Reshape", "Transpose", "Unsqueeze", "Squeeze", "Flatten", "Expand", "Tile", "Identity"})
    if (n->op_type() == op) return true;
  return false;
}

}  // namespace

kernels::HostTensor iota(const std::vector<int64_t>& shape) {
  kernels::HostTensor t = kernels::HostTensor::zeros(ir::DType::Int64, shape);
  auto* p = reinterpret_cast<int64_t*>(t.mutable_bytes());
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = i;
  return t;
}

std::optional<kernels::HostTensor> run_chain(const std::vector<ir::Node*>& chain, kernels::HostTensor x) {
  for (const ir::Node* n : chain) {
    folding::FoldFn fold = folding::find_folder(n->op_type());
    if (!fold) return std::nullopt;
    folding::Inputs ins;
    ins.emplace_back(std::move(x));
    for (size_t i = 1; i < n->num_inputs(); ++i) {
      const ir::Value* v = n->input(i);
      if (!v) {
        ins.emplace_back(std::nullopt);
        continue;
      }
      if (!v->is_constant() || !v->shape().is_static()) return std::nullopt;
      ins.emplace_back(kernels::HostTensor{v->dtype(), v->shape().sizes(), v->data()});
    }
    try {
      auto outs = fold(*n, ins);
      if (outs.size() != 1) return std::nullopt;
      x = std::move(outs[0]);
    } catch (const kernels::KernelError&) {
      return std::nullopt;
    }
  }
  return x;
}

ir::Value* find_view_source(const ir::Graph& g, ir::Value* v,
                            const std::function<bool(const ir::Value*, const kernels::HostTensor&)>& accept,
                            std::vector<ir::Node*>* chain, int max_steps, int64_t max_elements) {
  std::vector<ir::Node*> nodes;  // consumer first
  ir::Value* cur = v;
  for (int step = 0;; ++step) {
    if (cur->type().known() && cur->shape().is_static()) {
      int64_t n = 1;
      for (int64_t s : cur->shape().sizes()) n *= s;
      if (n <= max_elements) {
        std::vector<ir::Node*> forward(nodes.rbegin(), nodes.rend());
        auto mapped = run_chain(forward, iota(cur->shape().sizes()));
        if (mapped && accept(cur, *mapped)) {
          if (chain) *chain = std::move(forward);
          return cur;
        }
      }
    }
    if (step >= max_steps) return nullptr;
    ir::Node* p = cur->producer();
    if (!is_movement(p)) return nullptr;
    // Intermediate values must be used only by the chain (the start value may be used elsewhere).
    if (cur != v && (g.is_output(cur) || g.users(cur).size() != 1)) return nullptr;
    nodes.push_back(p);
    cur = p->input(0);
  }
}

bool same_tensor(const kernels::HostTensor& a, const kernels::HostTensor& b) {
  return a.shape == b.shape && a.dtype == b.dtype && a.data.size() == b.data.size() &&
         std::memcmp(a.data.data(), b.data.data(), a.data.size()) == 0;
}

}  // namespace vkc::passes
