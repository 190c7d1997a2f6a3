// Shape functions for the ONNX operators vkc folds or lowers, used where ONNX's
// own inference stopped (it cannot see through Cast on shape tensors, say): once
// folding turns a shape input into a constant, outputs downstream get static
// shapes here. Only unknown or symbolic outputs are filled; known ones are kept.
// Static input shapes that break an operator's contract in the ONNX spec (an LSTM fed a rank-4
// X, a MatMul whose inner dims differ, a Reshape to another element count) are recorded as
// contradictions: such a node cannot run for any input values.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <set>

#include "constants.h"
#include "vkc/kernels/host_tensor.h"
#include "vkc/passes/passes.h"

namespace vkc::passes {
namespace {

using Sizes = std::vector<int64_t>;

/// Static input shapes the operator is not defined for (thrown by the shape functions below).
struct ShapeContradiction : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::string dims(const Sizes& s) { return fmt::format("[{}]", fmt::join(s, ",")); }

// The broadcast of two shapes, or a contradiction.
Sizes broadcast_or_contradiction(const Sizes& a, const Sizes& b) {
  for (size_t i = 1; i <= std::min(a.size(), b.size()); ++i) {
    const int64_t x = a[a.size() - i], y = b[b.size() - i];
    if (x != y && x != 1 && y != 1) throw ShapeContradiction(fmt::format("shapes {} and {} do not broadcast", dims(a), dims(b)));
  }
  return kernels::broadcast_shapes(a, b);
}

using ShapeFn = std::function<std::optional<Sizes>(const ir::Node&, const std::vector<Sizes>&)>;

std::optional<Sizes> same_as_first(const ir::Node&, const std::vector<Sizes>& in) { return in.at(0); }

std::optional<Sizes> broadcast_all(const ir::Node&, const std::vector<Sizes>& in) {
  Sizes out = in.at(0);
  for (size_t i = 1; i < in.size(); ++i) out = broadcast_or_contradiction(out, in[i]);
  return out;
}

std::optional<Sizes> reshape(const ir::Node& n, const std::vector<Sizes>& in) {
  auto target = constant_ints(n.input(1));
  if (!target) return std::nullopt;
  Sizes shape = *target;
  int64_t known = 1, infer = -1, numel = 1;
  for (int64_t d : in[0])
    if (__builtin_mul_overflow(numel, d, &numel)) return std::nullopt;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 0 && !n.attr_int("allowzero", 0)) shape[i] = in[0].at(i);
    if (shape[i] == -1 && infer < 0) infer = static_cast<int64_t>(i);
    else if (shape[i] < 0 || __builtin_mul_overflow(known, shape[i], &known)) return std::nullopt;
  }
  if (infer >= 0) {
    if (known != 0 && numel % known != 0)
      throw ShapeContradiction(fmt::format("{} elements cannot be reshaped to {}", numel, dims(*target)));
    shape[infer] = known ? numel / known : 0;
  } else if (known != numel) {
    throw ShapeContradiction(fmt::format("{} elements cannot be reshaped to {}", numel, dims(*target)));
  }
  return shape;
}

std::optional<Sizes> transpose(const ir::Node& n, const std::vector<Sizes>& in) {
  Sizes perm;
  for (int64_t d = static_cast<int64_t>(in[0].size()); d-- > 0;) perm.push_back(d);
  perm = n.attr_ints("perm", perm);
  Sizes out;
  for (int64_t p : perm) out.push_back(in[0].at(p));
  return out;
}

std::optional<Sizes> matmul(const ir::Node&, const std::vector<Sizes>& in) {
  Sizes a = in.at(0), b = in.at(1);
  if (a.empty() || b.empty()) return std::nullopt;
  const bool a1 = a.size() == 1, b1 = b.size() == 1;
  if (a1) a.insert(a.begin(), 1);
  if (b1) b.push_back(1);
  if (a.back() != b[b.size() - 2])
    throw ShapeContradiction(fmt::format("inner dims differ: {} x {}", dims(in.at(0)), dims(in.at(1))));
  Sizes batch = broadcast_or_contradiction(Sizes(a.begin(), a.end() - 2), Sizes(b.begin(), b.end() - 2));
  if (!a1) batch.push_back(a[a.size() - 2]);
  if (!b1) batch.push_back(b.back());
  return batch;
}

std::optional<Sizes> concat(const ir::Node& n, const std::vector<Sizes>& in) {
  Sizes out = in.at(0);
  if (out.empty()) return std::nullopt;  // scalars do not concatenate (the node is reported)
  const int64_t axis = kernels::normalize_axis(n.attr_int("axis", 0), static_cast<int64_t>(out.size()));
  out[axis] = 0;
  for (const Sizes& s : in) {
    bool same = s.size() == out.size();
    for (size_t d = 0; same && d < s.size(); ++d) same = static_cast<int64_t>(d) == axis || s[d] == in[0][d];
    if (!same) throw ShapeContradiction(fmt::format("{} and {} do not concatenate on axis {}", dims(in[0]), dims(s), axis));
    out[axis] += s[axis];
  }
  return out;
}

std::optional<Sizes> unsqueeze(const ir::Node& n, const std::vector<Sizes>& in) {
  auto axes = n.has_attr("axes") ? std::optional<Sizes>(n.attr_ints("axes")) : constant_ints(n.input(1));
  if (!axes) return std::nullopt;
  const int64_t rank = static_cast<int64_t>(in[0].size() + axes->size());
  std::vector<bool> inserted(rank, false);
  for (int64_t a : *axes) inserted[kernels::normalize_axis(a, rank)] = true;
  Sizes out;
  size_t k = 0;
  for (int64_t d = 0; d < rank; ++d) out.push_back(inserted[d] ? 1 : in[0].at(k++));
  return out;
}

std::optional<Sizes> squeeze(const ir::Node& n, const std::vector<Sizes>& in) {
  std::optional<Sizes> axes = n.has_attr("axes") ? std::optional<Sizes>(n.attr_ints("axes"))
                              : n.input(1)       ? constant_ints(n.input(1))
                                                 : std::optional<Sizes>(Sizes{});
  if (!axes) return std::nullopt;
  const int64_t rank = static_cast<int64_t>(in[0].size());
  std::vector<bool> drop(rank, false);
  for (int64_t a : *axes) drop[kernels::normalize_axis(a, rank)] = true;
  Sizes out;
  for (int64_t d = 0; d < rank; ++d)
    if (!(axes->empty() ? in[0][d] == 1 : drop[d])) out.push_back(in[0][d]);
  return out;
}

std::optional<Sizes> flatten(const ir::Node& n, const std::vector<Sizes>& in) {
  const int64_t rank = static_cast<int64_t>(in[0].size());
  const int64_t axis = kernels::normalize_axis(n.attr_int("axis", 1), rank + 1);
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < rank; ++d) (d < axis ? outer : inner) *= in[0][d];
  return Sizes{outer, inner};
}

std::optional<Sizes> reduce(const ir::Node& n, const std::vector<Sizes>& in) {
  std::optional<Sizes> axes = n.has_attr("axes") ? std::optional<Sizes>(n.attr_ints("axes"))
                              : n.input(1)       ? constant_ints(n.input(1))
                                                 : std::optional<Sizes>(Sizes{});
  if (!axes) return std::nullopt;
  if (axes->empty() && n.attr_int("noop_with_empty_axes", 0)) return in[0];
  const int64_t rank = static_cast<int64_t>(in[0].size());
  std::vector<bool> reduced(rank, axes->empty());
  for (int64_t a : *axes) reduced[kernels::normalize_axis(a, rank)] = true;
  const bool keep = n.attr_int("keepdims", 1) != 0;
  Sizes out;
  for (int64_t d = 0; d < rank; ++d)
    if (!reduced[d]) out.push_back(in[0][d]);
    else if (keep) out.push_back(1);
  return out;
}

std::optional<Sizes> gather(const ir::Node& n, const std::vector<Sizes>& in) {
  if (in.size() < 2 || in[0].empty()) return std::nullopt;  // a scalar has no axis to gather on
  const int64_t axis = kernels::normalize_axis(n.attr_int("axis", 0), static_cast<int64_t>(in[0].size()));
  if (axis < 0 || axis >= static_cast<int64_t>(in[0].size())) return std::nullopt;
  Sizes out(in[0].begin(), in[0].begin() + axis);
  out.insert(out.end(), in[1].begin(), in[1].end());
  out.insert(out.end(), in[0].begin() + axis + 1, in[0].end());
  return out;
}

// Conv / pooling: NCHW... with kernel, strides, pads, dilations (auto_pad SAME_* keeps ceil(in / stride)).
std::optional<Sizes> window(const ir::Node& n, const std::vector<Sizes>& in) {
  const Sizes& x = in.at(0);
  if (x.size() < 3) return std::nullopt;
  const size_t spatial = x.size() - 2;
  Sizes kernel = n.attr_ints("kernel_shape", {});
  const bool conv = n.op_type() == "Conv";
  if (kernel.empty() && conv && in.size() > 1 && in[1].size() >= 2) kernel.assign(in[1].begin() + 2, in[1].end());
  if (kernel.size() != spatial || (conv && (in.size() < 2 || in[1].empty()))) return std::nullopt;
  const Sizes strides = n.attr_ints("strides", Sizes(spatial, 1));
  const Sizes dil = n.attr_ints("dilations", Sizes(spatial, 1));
  const Sizes pads = n.attr_ints("pads", Sizes(2 * spatial, 0));
  // Malformed attributes (a model's, not ours to guess at): no shape, and lowering reports the node.
  if (strides.size() != spatial || dil.size() != spatial || pads.size() != 2 * spatial) return std::nullopt;
  for (size_t i = 0; i < spatial; ++i)
    if (kernel[i] < 1 || strides[i] < 1 || dil[i] < 1 || pads[i] < 0 || pads[spatial + i] < 0) return std::nullopt;
  if (conv) {
    const int64_t group = n.attr_int("group", 1);
    if (in[1].size() != x.size() || group < 1 || x[1] != in[1][1] * group)
      throw ShapeContradiction(fmt::format("input {} does not fit weight {} in {} group(s)", dims(x), dims(in[1]), group));
  }
  const std::string auto_pad = n.attr_string("auto_pad", "NOTSET");
  const bool ceil_mode = n.attr_int("ceil_mode", 0) != 0;
  Sizes out = {x[0], conv ? in.at(1).at(0) : x[1]};
  for (size_t i = 0; i < spatial; ++i) {
    const int64_t ext = (kernel[i] - 1) * dil[i] + 1;
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") out.push_back((x[2 + i] + strides[i] - 1) / strides[i]);
    else if (auto_pad == "VALID") out.push_back((x[2 + i] - ext) / strides[i] + 1);
    else {
      const int64_t span = x[2 + i] + pads[i] + pads[spatial + i] - ext;
      out.push_back((ceil_mode ? (span + strides[i] - 1) / strides[i] : span / strides[i]) + 1);
    }
    if (out.back() < 1)
      throw ShapeContradiction(fmt::format("the window does not fit in input {} (after padding)", dims(x)));
  }
  return out;
}

std::optional<Sizes> global_pool(const ir::Node&, const std::vector<Sizes>& in) {
  Sizes out = in.at(0);
  for (size_t d = 2; d < out.size(); ++d) out[d] = 1;
  return out;
}

std::optional<Sizes> gemm(const ir::Node& n, const std::vector<Sizes>& in) {
  if (in[0].size() != 2 || in[1].size() != 2)
    throw ShapeContradiction(fmt::format("Gemm needs 2-D A and B, not {} and {}", dims(in[0]), dims(in[1])));
  const bool ta = n.attr_int("transA", 0) != 0, tb = n.attr_int("transB", 0) != 0;
  if (in[0][ta ? 0 : 1] != in[1][tb ? 1 : 0])
    throw ShapeContradiction(fmt::format("inner dims differ: {} x {}", dims(in[0]), dims(in[1])));
  const int64_t m = ta ? in[0].at(1) : in[0].at(0);
  const int64_t k = tb ? in[1].at(0) : in[1].at(1);
  return Sizes{m, k};
}

std::optional<Sizes> slice(const ir::Node& n, const std::vector<Sizes>& in) {
  std::optional<Sizes> starts, ends, axes, steps = Sizes{};
  if (n.opset() < 10) {  // attributes before opset 10
    starts = n.attr_ints("starts");
    ends = n.attr_ints("ends");
    axes = n.attr_ints("axes");
  } else {
    starts = constant_ints(n.input(1));
    ends = constant_ints(n.input(2));
    axes = n.input(3) ? constant_ints(n.input(3)) : std::optional<Sizes>(Sizes{});
    steps = n.input(4) ? constant_ints(n.input(4)) : std::optional<Sizes>(Sizes{});
  }
  if (!starts || !ends || !axes || !steps || ends->size() != starts->size()) return std::nullopt;
  Sizes out = in[0];
  const int64_t rank = static_cast<int64_t>(out.size());
  for (size_t i = 0; i < starts->size(); ++i) {
    const int64_t a = kernels::normalize_axis(axes->empty() ? static_cast<int64_t>(i) : (*axes)[i], rank);
    const int64_t step = steps->empty() ? 1 : (*steps)[i];
    if (step == 0) return std::nullopt;
    const int64_t dim = in[0][a];
    if (step < 0) {  // from start (in [0, dim-1]) down to end (in [-1, dim-1]), not including it
      const int64_t s = std::clamp<int64_t>((*starts)[i] < 0 ? (*starts)[i] + dim : (*starts)[i], 0, dim - 1);
      const int64_t e = std::clamp<int64_t>((*ends)[i] < 0 ? (*ends)[i] + dim : (*ends)[i], -1, dim - 1);
      const int64_t stride = step == INT64_MIN ? INT64_MAX : -step;
      out[a] = dim > 0 && s > e ? (s - e - 1) / stride + 1 : 0;
      continue;
    }
    auto clampi = [&](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + dim : v, 0, dim); };
    const int64_t s = clampi((*starts)[i]), e = clampi((*ends)[i]);
    out[a] = e > s ? (e - s + step - 1) / step : 0;
  }
  return out;
}

// Expand(x, shape): the broadcast of x's shape and the constant target.
std::optional<Sizes> expand(const ir::Node& n, const std::vector<Sizes>& in) {
  auto target = constant_ints(n.input(1));
  if (!target) return std::nullopt;
  return broadcast_or_contradiction(in[0], *target);
}

// Pad(x, pads [, value [, axes]]) (opset 11+) or pads attribute (before): begin and end pads per
// padded axis, negative ones crop.
std::optional<Sizes> pad(const ir::Node& n, const std::vector<Sizes>& in) {
  std::optional<std::vector<int64_t>> pads;
  if (n.num_inputs() > 1 && n.input(1)) pads = constant_ints(n.input(1));
  else pads = n.attr_ints("pads", {});
  if (!pads) return std::nullopt;
  const int64_t rank = static_cast<int64_t>(in[0].size());
  std::vector<int64_t> axes;
  if (n.num_inputs() > 3 && n.input(3)) {
    auto a = constant_ints(n.input(3));
    if (!a) return std::nullopt;
    for (int64_t ax : *a) axes.push_back(ax < 0 ? ax + rank : ax);
  } else {
    for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
  }
  if (pads->size() != 2 * axes.size()) return std::nullopt;
  Sizes out = in[0];
  for (size_t i = 0; i < axes.size(); ++i) {
    if (axes[i] < 0 || axes[i] >= rank) return std::nullopt;
    int64_t d = 0;
    if (__builtin_add_overflow(out[static_cast<size_t>(axes[i])], (*pads)[i], &d) ||
        __builtin_add_overflow(d, (*pads)[i + axes.size()], &d) || d < 0)
      return std::nullopt;
    out[static_cast<size_t>(axes[i])] = d;
  }
  return out;
}

// Tile(x, repeats).
std::optional<Sizes> tile(const ir::Node& n, const std::vector<Sizes>& in) {
  auto reps = constant_ints(n.input(1));
  if (!reps || reps->size() != in[0].size()) return std::nullopt;
  Sizes out = in[0];
  for (size_t i = 0; i < out.size(); ++i) out[i] *= (*reps)[i];
  return out;
}

// LSTM / GRU / RNN (X, W, R, ...): Y [S, D, B, H] and the last states [D, B, H] (layout 1:
// [B, S, D, H] and [B, D, H]); H from hidden_size or R's last dim.
std::optional<std::vector<Sizes>> recurrent(const ir::Node& n, const std::vector<Sizes>& in) {
  if (in.size() < 3) return std::nullopt;
  if (in[0].size() != 3 || in[1].size() != 3 || in[2].size() != 3)
    throw ShapeContradiction(fmt::format("X {}, W {} and R {} must be 3-D", dims(in[0]), dims(in[1]), dims(in[2])));
  if (in[0][2] != in[1][2]) throw ShapeContradiction(fmt::format("X {} does not fit W {}", dims(in[0]), dims(in[1])));
  const bool batch_first = n.attr_int("layout", 0) != 0;
  const int64_t s = in[0][batch_first ? 1 : 0], b = in[0][batch_first ? 0 : 1], d = in[2][0];
  const int64_t h = n.attr_int("hidden_size", in[2][2]);
  const Sizes state = batch_first ? Sizes{b, d, h} : Sizes{d, b, h};
  return std::vector<Sizes>{batch_first ? Sizes{b, s, d, h} : Sizes{s, d, b, h}, state, state};
}

// Split: the sizes from its `split` input (opset 13+) or attribute, else equal parts (opset 18's
// num_outputs: ceil(dim / parts) each, the last what remains).
std::optional<std::vector<Sizes>> split(const ir::Node& n, const std::vector<Sizes>& in) {
  const Sizes& x = in.at(0);
  const int64_t rank = static_cast<int64_t>(x.size());
  int64_t axis = n.attr_int("axis", 0);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) throw ShapeContradiction(fmt::format("axis {} of a rank-{} input", n.attr_int("axis", 0), rank));
  std::vector<int64_t> parts;
  if (n.num_inputs() > 1 && n.input(1)) {
    auto c = constant_ints(n.input(1));
    if (!c) return std::nullopt;
    parts = *c;
  } else if (n.has_attr("split")) {
    parts = n.attr_ints("split");
  } else {
    const int64_t k = static_cast<int64_t>(n.outputs().size()), d = x[axis];
    if (k <= 0) return std::nullopt;
    const int64_t each = (d + k - 1) / k;
    for (int64_t i = 0; i < k; ++i) parts.push_back(std::max<int64_t>(0, std::min(each, d - i * each)));
  }
  int64_t total = 0;
  for (int64_t p : parts) {
    if (p < 0) throw ShapeContradiction(fmt::format("a negative split size {}", p));
    total += p;
  }
  if (total != x[axis] || parts.size() != n.outputs().size())
    throw ShapeContradiction(fmt::format("split sizes [{}] do not cut dim {} of {} into {} outputs", fmt::join(parts, ","),
                                         axis, dims(x), n.outputs().size()));
  std::vector<Sizes> outs;
  for (int64_t p : parts) {
    Sizes o = x;
    o[axis] = p;
    outs.push_back(o);
  }
  return outs;
}

// Resize (opset 10+: sizes, else scales, optionally over `axes`; opset 18's
// keep_aspect_ratio_policy) and Upsample (scales): the output sizes once those inputs are constant
// (fold-constants computed them from Shape, Slice, Concat, Cast... of static inputs).
std::optional<Sizes> resize(const ir::Node& n, const std::vector<Sizes>& in) {
  const Sizes& x = in.at(0);
  const bool old = n.op_type() == "Upsample" || n.opset() < 11;  // X, scales (Upsample < 9: an attribute)
  const ir::Value* scales_v = old ? (n.num_inputs() > 1 ? n.input(1) : nullptr) : n.num_inputs() > 2 ? n.input(2) : nullptr;
  const ir::Value* sizes_v = !old && n.num_inputs() > 3 ? n.input(3) : nullptr;
  Sizes axes = n.has_attr("axes") ? n.attr_ints("axes") : Sizes{};
  if (axes.empty())
    for (size_t i = 0; i < x.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  for (int64_t& a : axes) {
    if (a < 0) a += static_cast<int64_t>(x.size());
    if (a < 0 || a >= static_cast<int64_t>(x.size())) return std::nullopt;
  }
  Sizes out = x;
  if (sizes_v && sizes_v->shape().is_static() && sizes_v->shape().numel() > 0) {
    auto sizes = constant_ints(sizes_v);
    if (!sizes || sizes->size() != axes.size()) return std::nullopt;
    const std::string policy = n.attr_string("keep_aspect_ratio_policy", "stretch");
    if (policy == "stretch") {
      for (size_t k = 0; k < axes.size(); ++k) out[static_cast<size_t>(axes[k])] = (*sizes)[k];
      return out;
    }
    // not_larger / not_smaller: one scale for every axis, the smallest / largest of size / input.
    double scale = policy == "not_larger" ? INFINITY : 0;
    for (size_t k = 0; k < axes.size(); ++k) {
      const double r = static_cast<double>((*sizes)[k]) / static_cast<double>(x[static_cast<size_t>(axes[k])]);
      scale = policy == "not_larger" ? std::min(scale, r) : std::max(scale, r);
    }
    for (int64_t a : axes) out[static_cast<size_t>(a)] = static_cast<int64_t>(std::llround(scale * static_cast<double>(x[static_cast<size_t>(a)])));
    return out;
  }
  const std::optional<std::vector<float>> scales = constant_floats(scales_v);
  if (!scales || scales->size() != axes.size()) return std::nullopt;
  for (size_t k = 0; k < axes.size(); ++k) {
    const size_t a = static_cast<size_t>(axes[k]);
    out[a] = static_cast<int64_t>(std::floor(static_cast<double>(x[a]) * static_cast<double>((*scales)[k])));
  }
  return out;
}

// ConstantOfShape: the shape is its input's values.
std::optional<Sizes> constant_of_shape(const ir::Node& n, const std::vector<Sizes>&) { return constant_ints(n.input(0)); }

// Range: ceil((limit - start) / delta) elements, for constant integer or float scalars.
std::optional<Sizes> range(const ir::Node& n, const std::vector<Sizes>&) {
  double v[3];
  for (int i = 0; i < 3; ++i) {
    if (auto ints = constant_ints(n.input(i)); ints && ints->size() == 1) v[i] = static_cast<double>((*ints)[0]);
    else if (auto fl = constant_floats(n.input(i)); fl && fl->size() == 1) v[i] = (*fl)[0];
    else return std::nullopt;
  }
  if (v[2] == 0) throw ShapeContradiction("Range's delta is 0");
  return Sizes{std::max<int64_t>(0, static_cast<int64_t>(std::ceil((v[1] - v[0]) / v[2])))};
}

// The output's dtype when nothing recorded it: comparisons and predicates give bool, Where its
// branches' type, Cast its `to`, everything else here its first input's type.
ir::DType output_dtype(const ir::Node& n) {
  static const std::set<std::string, std::less<>> kBool = {"Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual",
                                                           "And", "Or", "Xor", "Not", "IsNaN", "IsInf"};
  if (kBool.count(n.op_type())) return ir::DType::Bool;
  if (n.op_type() == "Where") return n.num_inputs() > 1 && n.input(1) ? n.input(1)->dtype() : ir::DType::Undefined;
  if (n.op_type() == "Cast") return ir::dtype_from_onnx(n.attr_int("to", 0)).value_or(ir::DType::Undefined);
  return n.input(0)->dtype();
}

const std::map<std::string, ShapeFn, std::less<>>& shape_fns() {
  static const std::map<std::string, ShapeFn, std::less<>> kFns = [] {
    std::map<std::string, ShapeFn, std::less<>> m;
    for (const char* op : {"Relu", "Sigmoid", "Tanh", "HardSwish", "HardSigmoid", "LeakyRelu", "Clip", "Softmax",
                           "LogSoftmax", "Neg", "Abs", "Sqrt", "Reciprocal", "Exp", "Log", "Erf", "Cast", "Identity",
                           "Dropout", "BatchNormalization", "Sin", "Cos", "Not", "Floor", "Ceil", "Round", "Elu",
                           "Gelu", "Softplus", "LayerNormalization", "InstanceNormalization", "IsNaN", "IsInf",
                           "Sign", "Mish"})
      m[op] = same_as_first;
    for (const char* op : {"Add", "Sub", "Mul", "Div", "Pow", "Min", "Max", "Equal", "Less", "Greater",
                           "LessOrEqual", "GreaterOrEqual", "And", "Or", "Xor", "Where", "PRelu", "Mod"})
      m[op] = broadcast_all;
    m["Reshape"] = reshape;
    m["Expand"] = expand;
    m["Tile"] = tile;
    m["Pad"] = pad;
    m["Transpose"] = transpose;
    m["MatMul"] = matmul;
    m["Concat"] = concat;
    m["Unsqueeze"] = unsqueeze;
    m["Squeeze"] = squeeze;
    m["Flatten"] = flatten;
    m["Gather"] = gather;
    m["Gemm"] = gemm;
    m["Slice"] = slice;
    m["Resize"] = resize;
    m["Upsample"] = resize;
    m["ConstantOfShape"] = constant_of_shape;
    m["Range"] = range;
    for (const char* op : {"ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd"}) m[op] = reduce;
    for (const char* op : {"Conv", "MaxPool", "AveragePool"}) m[op] = window;
    for (const char* op : {"GlobalAveragePool", "GlobalMaxPool"}) m[op] = global_pool;
    return m;
  }();
  return kFns;
}

// Operators with several outputs, each shape in output order.
using MultiShapeFn = std::function<std::optional<std::vector<Sizes>>(const ir::Node&, const std::vector<Sizes>&)>;
const std::map<std::string, MultiShapeFn, std::less<>>& multi_shape_fns() {
  static const std::map<std::string, MultiShapeFn, std::less<>> kFns = {
      {"LSTM", recurrent}, {"GRU", recurrent}, {"RNN", recurrent}, {"Split", split}};
  return kFns;
}

}  // namespace

bool propagate_shapes(ir::Graph& g, std::map<std::string, std::string>* contradictions) {
  bool changed = false;
  for (ir::Node* n : g.nodes()) {
    if (n->domain() != ir::kOnnxDomain) continue;
    bool needed = false;
    for (const ir::Value* o : n->outputs()) needed = needed || !o->type().known() || !o->shape().is_static();
    if (!needed) continue;
    auto it = shape_fns().find(n->op_type());
    auto multi = multi_shape_fns().find(n->op_type());
    if (it == shape_fns().end() && multi == multi_shape_fns().end()) continue;
    std::vector<Sizes> in;
    bool ready = true;
    for (const ir::Value* v : n->inputs()) {
      if (!v) {
        in.emplace_back();
        continue;
      }
      ready = ready && v->type().known() && v->shape().is_static();
      if (ready) in.push_back(v->shape().sizes());
    }
    if (!ready || in.empty()) continue;
    auto contradicted = [&](const ShapeContradiction& e) {
      if (contradictions) contradictions->emplace(n->name(), e.what());
    };
    if (multi != multi_shape_fns().end()) {
      std::optional<std::vector<Sizes>> shapes;
      try {
        shapes = multi->second(*n, in);
      } catch (const ShapeContradiction& e) {
        contradicted(e);
        continue;
      }
      for (size_t i = 0; shapes && i < n->outputs().size() && i < shapes->size(); ++i) {
        ir::Value* out = n->output(i);
        if (!out || (out->type().known() && out->shape().is_static())) continue;
        out->set_type({out->dtype() == ir::DType::Undefined ? output_dtype(*n) : out->dtype(), ir::Shape::of((*shapes)[i])});
        changed = true;
      }
      continue;
    }
    std::optional<Sizes> shape;
    try {
      shape = it->second(*n, in);
    } catch (const ShapeContradiction& e) {
      contradicted(e);
      continue;
    } catch (const std::exception&) {
      continue;  // malformed for this op: lowering reports it
    }
    if (!shape) continue;
    ir::Value* out = n->output(0);
    ir::DType dtype = out->dtype();
    if (dtype == ir::DType::Undefined) dtype = output_dtype(*n);
    if (dtype == ir::DType::Undefined) continue;
    out->set_type({dtype, ir::Shape::of(*shape)});
    changed = true;
  }
  return changed;
}

}  // namespace vkc::passes
