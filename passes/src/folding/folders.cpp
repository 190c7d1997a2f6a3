#include "folders.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>

#include "vkc/kernels/data_movement.h"
#include "vkc/kernels/elementwise.h"
#include "vkc/kernels/linear.h"
#include "vkc/kernels/norm.h"

namespace vkc::passes::folding {
namespace {

using kernels::HostTensor;
using kernels::KernelError;
using Out = std::vector<HostTensor>;

const HostTensor& in(const Inputs& ins, size_t i) {
  if (i >= ins.size() || !ins[i]) throw KernelError(fmt::format("input {} is missing", i));
  return *ins[i];
}

std::vector<int64_t> ints_or(const Inputs& ins, size_t i, std::vector<int64_t> def) {
  return i < ins.size() && ins[i] ? ins[i]->ints() : def;
}

// Axes from the attribute (older opsets) or from input `index` (newer ones).
std::vector<int64_t> axes_of(const ir::Node& n, const Inputs& ins, size_t index) {
  if (n.has_attr("axes")) return n.attr_ints("axes");
  return ints_or(ins, index, {});
}

Out fold_binary(const ir::Node& n, const Inputs& ins) {
  static const std::map<std::string, kernels::BinaryOp, std::less<>> kOps = {
      {"Add", kernels::BinaryOp::Add},       {"Sub", kernels::BinaryOp::Sub},
      {"Mul", kernels::BinaryOp::Mul},       {"Div", kernels::BinaryOp::Div},
      {"Pow", kernels::BinaryOp::Pow},       {"Mod", kernels::BinaryOp::Mod},
      {"Equal", kernels::BinaryOp::Equal},   {"Less", kernels::BinaryOp::Less},
      {"Greater", kernels::BinaryOp::Greater}, {"LessOrEqual", kernels::BinaryOp::LessOrEqual},
      {"GreaterOrEqual", kernels::BinaryOp::GreaterOrEqual}, {"And", kernels::BinaryOp::And},
      {"Or", kernels::BinaryOp::Or},         {"Min", kernels::BinaryOp::Min},
      {"Max", kernels::BinaryOp::Max}};
  if (n.op_type() == "Mod" && n.attr_int("fmod", 0) && !ir::is_float(in(ins, 0).dtype))
    throw KernelError("integer fmod is not folded");
  // Min and Max are variadic.
  HostTensor acc = in(ins, 0);
  for (size_t i = 1; i < ins.size(); ++i) acc = kernels::binary(kOps.at(n.op_type()), acc, in(ins, i));
  return {acc};
}

Out fold_unary(const ir::Node& n, const Inputs& ins) {
  static const std::map<std::string, kernels::UnaryOp, std::less<>> kOps = {
      {"Neg", kernels::UnaryOp::Neg},     {"Abs", kernels::UnaryOp::Abs},   {"Sqrt", kernels::UnaryOp::Sqrt},
      {"Reciprocal", kernels::UnaryOp::Reciprocal}, {"Exp", kernels::UnaryOp::Exp}, {"Log", kernels::UnaryOp::Log},
      {"Sin", kernels::UnaryOp::Sin},     {"Cos", kernels::UnaryOp::Cos},   {"Tanh", kernels::UnaryOp::Tanh},
      {"Erf", kernels::UnaryOp::Erf},     {"Sigmoid", kernels::UnaryOp::Sigmoid}, {"Relu", kernels::UnaryOp::Relu},
      {"Floor", kernels::UnaryOp::Floor}, {"Ceil", kernels::UnaryOp::Ceil}, {"Round", kernels::UnaryOp::Round},
      {"Not", kernels::UnaryOp::Not}};
  return {kernels::unary(kOps.at(n.op_type()), in(ins, 0))};
}

Out fold_shape(const ir::Node& n, const Inputs& ins) {
  const auto& dims = in(ins, 0).shape;
  const int64_t rank = static_cast<int64_t>(dims.size());
  auto clampi = [&](int64_t v) { return std::max<int64_t>(0, std::min(rank, v < 0 ? v + rank : v)); };
  const int64_t start = clampi(n.attr_int("start", 0)), end = clampi(n.attr_int("end", rank));
  std::vector<int64_t> out(dims.begin() + start, dims.begin() + std::max(start, end));
  return {HostTensor::of(ir::DType::Int64, {static_cast<int64_t>(out.size())}, out)};
}

Out fold_size(const ir::Node&, const Inputs& ins) {
  return {HostTensor::of(ir::DType::Int64, {}, std::vector<int64_t>{in(ins, 0).numel()})};
}

Out fold_cast(const ir::Node& n, const Inputs& ins) {
  auto to = ir::dtype_from_onnx(n.attr_int("to", 0));
  if (!to || *to == ir::DType::String) throw KernelError("unsupported Cast target");
  return {kernels::cast(in(ins, 0), *to)};
}

Out fold_reshape(const ir::Node& n, const Inputs& ins) {
  const HostTensor& x = in(ins, 0);
  std::vector<int64_t> shape = n.op_type() == "Reshape" ? in(ins, 1).ints() : std::vector<int64_t>{};
  if (n.op_type() == "Flatten") {
    const int64_t axis = kernels::normalize_axis(n.attr_int("axis", 1), static_cast<int64_t>(x.shape.size()) + 1);
    int64_t outer = 1;
    for (int64_t d = 0; d < axis; ++d) outer *= x.shape[d];
    return {kernels::reshape(x, {outer, x.numel() / std::max<int64_t>(outer, 1)})};
  }
  const bool allowzero = n.attr_int("allowzero", 0) != 0;
  int64_t known = 1, infer = -1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 0 && !allowzero) shape[i] = x.shape.at(i);
    if (shape[i] == -1) infer = static_cast<int64_t>(i);
    else known *= shape[i];
  }
  if (infer >= 0) shape[infer] = known ? x.numel() / known : 0;
  return {kernels::reshape(x, shape)};
}

Out fold_unsqueeze(const ir::Node& n, const Inputs& ins) {
  const HostTensor& x = in(ins, 0);
  auto axes = axes_of(n, ins, 1);
  const int64_t rank = static_cast<int64_t>(x.shape.size() + axes.size());
  std::vector<bool> inserted(rank, false);
  for (int64_t a : axes) inserted[kernels::normalize_axis(a, rank)] = true;
  std::vector<int64_t> shape;
  size_t k = 0;
  for (int64_t d = 0; d < rank; ++d) shape.push_back(inserted[d] ? 1 : x.shape.at(k++));
  return {kernels::reshape(x, shape)};
}

Out fold_squeeze(const ir::Node& n, const Inputs& ins) {
  const HostTensor& x = in(ins, 0);
  const int64_t rank = static_cast<int64_t>(x.shape.size());
  auto axes = axes_of(n, ins, 1);
  std::vector<bool> drop(rank, false);
  for (int64_t a : axes) drop[kernels::normalize_axis(a, rank)] = true;
  std::vector<int64_t> shape;
  for (int64_t d = 0; d < rank; ++d)
    if (!(axes.empty() ? x.shape[d] == 1 : drop[d])) shape.push_back(x.shape[d]);
  return {kernels::reshape(x, shape)};
}

Out fold_concat(const ir::Node& n, const Inputs& ins) {
  std::vector<const HostTensor*> xs;
  for (const auto& t : ins)
    if (t) xs.push_back(&*t);
  return {kernels::concat(xs, n.attr_int("axis", 0))};
}

Out fold_gather(const ir::Node& n, const Inputs& ins) {
  return {kernels::gather(in(ins, 0), in(ins, 1), n.attr_int("axis", 0))};
}

Out fold_slice(const ir::Node& n, const Inputs& ins) {
  if (n.opset() < 10)
    return {kernels::slice(in(ins, 0), n.attr_ints("starts"), n.attr_ints("ends"), n.attr_ints("axes"), {})};
  return {kernels::slice(in(ins, 0), in(ins, 1).ints(), in(ins, 2).ints(), ints_or(ins, 3, {}), ints_or(ins, 4, {}))};
}

Out fold_transpose(const ir::Node& n, const Inputs& ins) {
  const HostTensor& x = in(ins, 0);
  std::vector<int64_t> perm;
  for (int64_t d = static_cast<int64_t>(x.shape.size()); d-- > 0;) perm.push_back(d);
  return {kernels::transpose(x, n.attr_ints("perm", perm))};
}

Out fold_where(const ir::Node&, const Inputs& ins) { return {kernels::where(in(ins, 0), in(ins, 1), in(ins, 2))}; }

Out fold_range(const ir::Node&, const Inputs& ins) {
  for (size_t i = 0; i < 3; ++i)
    if (in(ins, i).numel() != 1) throw kernels::KernelError("Range: start, limit and delta must be scalars");
  const HostTensor& start = in(ins, 0);
  return {kernels::range(start.get_f(0), in(ins, 1).get_f(0), in(ins, 2).get_f(0), start.dtype)};
}

Out fold_constant_of_shape(const ir::Node& n, const Inputs& ins) {
  const auto shape = in(ins, 0).ints();
  // A scalar, so that an empty shape gives a scalar (expanding [1] to [] would give [1]).
  HostTensor value = HostTensor::of(ir::DType::Float32, {}, std::vector<float>{0.0f});
  if (const auto* t = n.attr("value"); t && std::holds_alternative<ir::TensorAttr>(*t)) {
    const auto& ta = std::get<ir::TensorAttr>(*t);
    if (ta.data.size() != ir::dtype_size(ta.type.dtype))
      throw kernels::KernelError("ConstantOfShape: 'value' must hold exactly one element");
    value = HostTensor{ta.type.dtype, {}, ta.data};
  }
  return {kernels::expand(value, shape)};
}

Out fold_expand(const ir::Node&, const Inputs& ins) { return {kernels::expand(in(ins, 0), in(ins, 1).ints())}; }

Out fold_tile(const ir::Node&, const Inputs& ins) { return {kernels::tile(in(ins, 0), in(ins, 1).ints())}; }

Out fold_reduce(const ir::Node& n, const Inputs& ins) {
  static const std::map<std::string, kernels::ReduceOp, std::less<>> kOps = {
      {"ReduceSum", kernels::ReduceOp::Sum}, {"ReduceMean", kernels::ReduceOp::Mean},
      {"ReduceMax", kernels::ReduceOp::Max}, {"ReduceMin", kernels::ReduceOp::Min},
      {"ReduceProd", kernels::ReduceOp::Prod}};
  auto axes = axes_of(n, ins, 1);
  if (axes.empty() && n.attr_int("noop_with_empty_axes", 0)) return {in(ins, 0)};
  return {kernels::reduce(kOps.at(n.op_type()), in(ins, 0), axes, n.attr_int("keepdims", 1) != 0)};
}

// GatherND(data, indices, batch_dims): slices of data picked by the last axis of indices.
Out fold_gather_nd(const ir::Node& n, const Inputs& ins) {
  const HostTensor &x = in(ins, 0), &idx = in(ins, 1);
  const int64_t b = n.attr_int("batch_dims", 0), r = static_cast<int64_t>(x.shape.size());
  const int64_t q = static_cast<int64_t>(idx.shape.size());
  if (q < 1 || b < 0 || b >= q || b > r) throw KernelError("GatherND: bad ranks");
  const int64_t k = idx.shape.back();
  if (k < 1 || b + k > r) throw KernelError("GatherND: index depth exceeds the data rank");
  for (int64_t i = 0; i < b; ++i)
    if (x.shape[i] != idx.shape[i]) throw KernelError("GatherND: batch dims differ");
  std::vector<int64_t> out_shape(idx.shape.begin(), idx.shape.end() - 1);
  out_shape.insert(out_shape.end(), x.shape.begin() + b + k, x.shape.end());
  const auto xs = kernels::strides_of(x.shape);
  int64_t batch = 1, inner = 1, per_batch = 1;
  for (int64_t i = 0; i < b; ++i) batch *= x.shape[i];
  for (int64_t i = b + k; i < r; ++i) inner *= x.shape[i];
  for (int64_t i = b; i < q - 1; ++i) per_batch *= idx.shape[i];
  HostTensor out = HostTensor::zeros(x.dtype, out_shape);
  const size_t es = ir::dtype_size(x.dtype);
  for (int64_t bi = 0; bi < batch; ++bi)
    for (int64_t t = 0; t < per_batch; ++t) {
      int64_t off = bi * (b > 0 ? xs[b - 1] : 0);
      for (int64_t j = 0; j < k; ++j) {
        int64_t v = idx.get_i((bi * per_batch + t) * k + j);
        const int64_t dim = x.shape[b + j];
        if (v < 0) v += dim;
        if (v < 0 || v >= dim) throw KernelError("GatherND: index out of range");
        off += v * xs[b + j];
      }
      std::memcpy(out.mutable_bytes() + (bi * per_batch + t) * inner * es, x.data.data() + off * es, inner * es);
    }
  return {out};
}

// Split(x, split?, axis, num_outputs): one output per part.
Out fold_split(const ir::Node& n, const Inputs& ins) {
  const HostTensor& x = in(ins, 0);
  const int64_t axis = kernels::normalize_axis(n.attr_int("axis", 0), static_cast<int64_t>(x.shape.size()));
  std::vector<int64_t> parts = n.has_attr("split") ? n.attr_ints("split") : ints_or(ins, 1, {});
  const int64_t outs = static_cast<int64_t>(n.outputs().size()), len = x.shape[axis];
  if (parts.empty()) {
    const int64_t each = (len + outs - 1) / outs;
    for (int64_t i = 0; i < outs; ++i) parts.push_back(std::max<int64_t>(0, std::min(each, len - i * each)));
  }
  if (static_cast<int64_t>(parts.size()) != outs) throw KernelError("Split: parts do not match the outputs");
  Out result;
  int64_t start = 0;
  for (int64_t p : parts) {
    result.push_back(kernels::slice(x, {start}, {start + p}, {axis}, {}));
    start += p;
  }
  if (start != len) throw KernelError("Split: parts do not add up to the axis");
  return result;
}

Out fold_is_nan(const ir::Node&, const Inputs& ins) {
  const HostTensor& x = in(ins, 0);
  HostTensor out = HostTensor::zeros(ir::DType::Bool, x.shape);
  for (int64_t i = 0; i < x.numel(); ++i) out.set_i(i, std::isnan(x.get_f(i)) ? 1 : 0);
  return {out};
}

Out fold_xor(const ir::Node&, const Inputs& ins) {
  const HostTensor &a = in(ins, 0), &b = in(ins, 1);
  HostTensor ne = kernels::binary(kernels::BinaryOp::Equal, a, b);
  return {kernels::unary(kernels::UnaryOp::Not, ne)};
}

Out fold_identity(const ir::Node&, const Inputs& ins) { return {in(ins, 0)}; }

// Trilu(x, k = 0), upper = 1.
Out fold_trilu(const ir::Node& n, const Inputs& ins) {
  const int64_t k = ins.size() > 1 && ins[1] ? ins[1]->get_i(0) : 0;
  return {kernels::trilu(in(ins, 0), n.attr_int("upper", 1) != 0, k)};
}

// CumSum(x, axis), exclusive and reverse attributes (exporters' position ids from constant masks).
Out fold_cumsum(const ir::Node& n, const Inputs& ins) {
  return {kernels::cumsum(in(ins, 0), in(ins, 1).get_i(0), n.attr_int("exclusive", 0) != 0,
                          n.attr_int("reverse", 0) != 0)};
}

// MatMul of float operands as numpy multiplies them: a 1-D operand gains a unit axis (dropped
// again), leading axes broadcast. The reference kernel multiplies naively on one core, so a product
// of more than 2^26 multiply-adds is left to the program.
Out fold_matmul(const ir::Node&, const Inputs& ins) {
  HostTensor a = in(ins, 0), b = in(ins, 1);
  if (!ir::is_float(a.dtype) || a.dtype != b.dtype) throw KernelError("MatMul: only float operands are folded");
  if (a.shape.empty() || b.shape.empty()) throw KernelError("MatMul: scalar operand");
  const bool a_vec = a.shape.size() == 1, b_vec = b.shape.size() == 1;
  if (a_vec) a.shape.insert(a.shape.begin(), 1);
  if (b_vec) b.shape.push_back(1);
  const std::vector<int64_t> lead_a(a.shape.begin(), a.shape.end() - 2), lead_b(b.shape.begin(), b.shape.end() - 2);
  std::vector<int64_t> lead = kernels::broadcast_shapes(lead_a, lead_b);
  const int64_t m = a.shape[a.shape.size() - 2], k = a.shape.back(), n = b.shape.back();
  int64_t work = m * k * n;
  for (int64_t d : lead) work *= d;
  if (work > (int64_t{1} << 26)) throw KernelError("MatMul: too large to fold");
  std::vector<int64_t> shape_a = lead, shape_b = lead;
  shape_a.insert(shape_a.end(), {m, k});
  shape_b.insert(shape_b.end(), {b.shape[b.shape.size() - 2], n});
  if (a.shape != shape_a) a = kernels::expand(a, shape_a);
  if (b.shape != shape_b) b = kernels::expand(b, shape_b);
  HostTensor out = kernels::matmul(a, b);
  std::vector<int64_t> shape = lead;
  if (!a_vec) shape.push_back(m);
  if (!b_vec) shape.push_back(n);
  return {kernels::reshape(out, shape)};
}

// BatchNormalization in inference form (timm's weight standardization normalizes constant
// weights with statistics computed from them).
Out fold_batch_norm(const ir::Node& n, const Inputs& ins) {
  if (n.attr_int("training_mode", 0) != 0 || n.outputs().size() != 1)
    throw kernels::KernelError("BatchNormalization: training mode is not folded");
  return {kernels::batch_norm(in(ins, 0), &in(ins, 1), &in(ins, 2), in(ins, 3), in(ins, 4),
                              n.attr_float("epsilon", 1e-5))};
}

const std::map<std::string, FoldFn, std::less<>>& folders() {
  static const std::map<std::string, FoldFn, std::less<>> kFolders = {
      {"Add", fold_binary}, {"Sub", fold_binary}, {"Mul", fold_binary}, {"Div", fold_binary},
      {"Pow", fold_binary}, {"Mod", fold_binary}, {"Min", fold_binary}, {"Max", fold_binary},
      {"Equal", fold_binary}, {"Less", fold_binary}, {"Greater", fold_binary}, {"LessOrEqual", fold_binary},
      {"GreaterOrEqual", fold_binary}, {"And", fold_binary}, {"Or", fold_binary},
      {"Neg", fold_unary}, {"Abs", fold_unary}, {"Sqrt", fold_unary}, {"Reciprocal", fold_unary},
      {"Exp", fold_unary}, {"Log", fold_unary}, {"Sin", fold_unary}, {"Cos", fold_unary}, {"Tanh", fold_unary},
      {"Erf", fold_unary}, {"Sigmoid", fold_unary}, {"Relu", fold_unary}, {"Floor", fold_unary},
      {"Ceil", fold_unary}, {"Round", fold_unary}, {"Not", fold_unary},
      {"Shape", fold_shape}, {"Size", fold_size}, {"Cast", fold_cast}, {"Reshape", fold_reshape},
      {"Flatten", fold_reshape}, {"Unsqueeze", fold_unsqueeze}, {"Squeeze", fold_squeeze},
      {"Concat", fold_concat}, {"Gather", fold_gather}, {"Slice", fold_slice}, {"Transpose", fold_transpose},
      {"Where", fold_where}, {"Range", fold_range}, {"ConstantOfShape", fold_constant_of_shape},
      {"Expand", fold_expand}, {"Tile", fold_tile}, {"ReduceSum", fold_reduce}, {"ReduceMean", fold_reduce},
      {"ReduceMax", fold_reduce}, {"ReduceMin", fold_reduce}, {"ReduceProd", fold_reduce},
      {"Trilu", fold_trilu}, {"CumSum", fold_cumsum}, {"GatherND", fold_gather_nd}, {"Split", fold_split},
      {"IsNaN", fold_is_nan}, {"Xor", fold_xor}, {"Identity", fold_identity},
      {"BatchNormalization", fold_batch_norm}, {"MatMul", fold_matmul},
  };
  return kFolders;
}

}  // namespace

FoldFn find_folder(std::string_view op_type) {
  auto it = folders().find(op_type);
  return it == folders().end() ? nullptr : it->second;
}

}  // namespace vkc::passes::folding
