#include "evaluate.h"

#include <functional>

#include "folders.h"

namespace vkc::passes::folding {

std::vector<std::optional<kernels::HostTensor>> evaluate(const std::vector<const ir::Value*>& targets,
                                                         const std::map<const ir::Value*, kernels::HostTensor>& bound) {
  std::map<const ir::Value*, kernels::HostTensor> known = bound;
  // Depth-first over producers; a cone deeper than this is not what a mask or a position is.
  std::function<bool(const ir::Value*, int)> compute = [&](const ir::Value* v, int depth) -> bool {
    if (known.count(v)) return true;
    if (v->is_constant()) {
      known.emplace(v, kernels::HostTensor{v->dtype(), v->shape().sizes(), v->data()});
      return true;
    }
    const ir::Node* n = v->producer();
    if (!n || depth > 256 || n->domain() != ir::kOnnxDomain) return false;
    const FoldFn fold = find_folder(n->op_type());
    if (!fold) return false;
    const bool shape_only = n->is_onnx("Shape") || n->is_onnx("Size");
    Inputs ins;
    for (const ir::Value* in : n->inputs()) {
      if (!in) {
        ins.emplace_back(std::nullopt);
      } else if (shape_only && in->type().known() && in->shape().is_static()) {
        ins.emplace_back(kernels::HostTensor{in->dtype(), in->shape().sizes(), ir::TensorData{}});
      } else {
        if (!compute(in, depth + 1)) return false;
        ins.emplace_back(known.at(in));
      }
    }
    std::vector<kernels::HostTensor> outs;
    try {
      outs = fold(*n, ins);
    } catch (const std::exception&) {
      return false;
    }
    for (size_t i = 0; i < outs.size() && i < n->outputs().size(); ++i)
      if (n->output(i)) known.emplace(n->output(i), std::move(outs[i]));
    return known.count(v) > 0;
  };
  std::vector<std::optional<kernels::HostTensor>> out;
  for (const ir::Value* t : targets) {
    if (t && compute(t, 0)) out.emplace_back(known.at(t));
    else out.emplace_back(std::nullopt);
  }
  return out;
}

std::optional<kernels::HostTensor> evaluate(const ir::Value* target,
                                            const std::map<const ir::Value*, kernels::HostTensor>& bound) {
  return std::move(evaluate(std::vector<const ir::Value*>{target}, bound).front());
}

}  // namespace vkc::passes::folding
