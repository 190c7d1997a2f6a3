// ReduceMean / ReduceSum / ReduceMax / ReduceMin.
#include <map>

#include "../constants.h"
#include "lowering.h"

namespace vkc::passes::lowering {

Result lower_reduce(ir::Graph&, ir::Node* n) {
  static const std::map<std::string, std::string, std::less<>> kOps = {{"ReduceMean", "aten.mean.dim"},
                                                                       {"ReduceSum", "aten.sum.dim_IntList"},
                                                                       {"ReduceMax", "aten.amax.default"},
                                                                       {"ReduceMin", "aten.amin.default"}};
  auto rank = static_cast<int64_t>(static_rank(n->input(0)).value_or(0));
  if (!rank) return std::string("input rank is unknown");
  std::vector<int64_t> axes;
  if (n->has_attr("axes")) {
    axes = n->attr_ints("axes");
  } else if (n->input(1)) {
    auto c = constant_ints(n->input(1));
    if (!c) return std::string("axes is not a constant");
    axes = *c;
  }
  if (axes.empty()) {
    if (n->attr_int("noop_with_empty_axes", 0)) return std::string("noop_with_empty_axes is not supported");
    for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
  }
  for (int64_t& a : axes) a = a < 0 ? a + rank : a;
  if (!ir::is_float(n->output(0)->dtype())) return std::string("only floating-point inputs are supported");
  to_runtime(n, kOps.at(n->op_type()), {n->input(0)}, {{"dim", axes}, {"keepdim", n->attr_int("keepdims", 1) != 0}});
  return std::nullopt;
}

}  // namespace vkc::passes::lowering
