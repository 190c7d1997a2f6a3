// Comparisons, logic, selection and indexing: where, eq/lt/le/gt/ge, logical_and/or, bitwise_not,
// _to_copy, embedding, index_select, gather, select_copy, expand_copy, repeat, pixel_shuffle.
#include <fmt/format.h>

#include "op_context.h"
#include "vkc/kernels/data_movement.h"
#include "vkc/kernels/elementwise.h"
#include "vkc/kernels/shape_ops.h"

namespace vkc::runtime::cpu {
namespace {

using kernels::BinaryOp;

template <BinaryOp Op>
void compare(const OpContext& c) {
  c.set_output(kernels::binary(Op, c.tensor(0), c.tensor(1)));  // bool; stored in the output's dtype
}

// aten.<op>.Scalar(self, other): self against one number, in self's dtype; `Negate`: its opposite
// (ne is not eq).
template <BinaryOp Op, bool Negate = false>
void compare_scalar(const OpContext& c) {
  const HostTensor& x = c.tensor(0);
  const HostTensor number = kernels::cast(HostTensor::of(ir::DType::Float64, {}, std::vector<double>{c.scalar_arg(1)}), x.dtype);
  HostTensor out = kernels::binary(Op, x, number);
  c.set_output(Negate ? kernels::unary(kernels::UnaryOp::Not, out) : out);
}

void bitwise_not(const OpContext& c) { c.set_output(kernels::unary(kernels::UnaryOp::Not, c.tensor(0))); }

// aten.where.self(condition, self, other)
void where(const OpContext& c) { c.set_output(kernels::where(c.tensor(0), c.tensor(1), c.tensor(2))); }

// aten._to_copy.default(self, *, dtype, layout, device, pin_memory, non_blocking, memory_format): the
// target dtype is the output tensor's (dtype is serialized as None), so storing converts.
void to_copy(const OpContext& c) { c.set_output(c.tensor(0)); }

// aten.embedding.default(weight, indices, padding_idx, scale_grad_by_freq, sparse): rows of weight.
void embedding(const OpContext& c) {
  if (c.tensor(0).shape.size() != 2) c.fail("weight must be 2-D");
  c.set_output(kernels::gather(c.tensor(0), c.tensor(1), 0));
}

// aten.index_select.default(self, dim, index)
void index_select(const OpContext& c) {
  if (c.tensor(2).shape.size() > 1) c.fail("index must be 0-D or 1-D");
  c.set_output(kernels::gather(c.tensor(0), c.tensor(2), c.int_arg(1)));
}

// aten.gather.default(self, dim, index, *, sparse_grad)
void gather(const OpContext& c) {
  c.bool_arg(3);
  c.set_output(kernels::gather_elements(c.tensor(0), c.tensor(2), c.int_arg(1)));
}

// aten.select_copy.int(self, dim, index): the slice at `index`, without dim.
void select_copy(const OpContext& c) {
  const HostTensor& x = c.tensor(0);
  const int64_t rank = static_cast<int64_t>(x.shape.size());
  const int64_t dim = kernels::normalize_axis(c.int_arg(1), rank);
  int64_t index = c.int_arg(2);
  if (index < 0) index += x.shape[dim];
  if (index < 0 || index >= x.shape[dim]) c.fail(fmt::format("index {} is out of range for size {}", c.int_arg(2), x.shape[dim]));
  HostTensor s = kernels::slice(x, {index}, {index + 1}, {dim}, {1});
  std::vector<int64_t> shape = s.shape;
  shape.erase(shape.begin() + dim);
  c.set_output(kernels::reshape(s, shape));
}

// aten.expand_copy.default(self, size, *, implicit): size is right-aligned; -1 keeps a dim.
void expand_copy(const OpContext& c) {
  const HostTensor& x = c.tensor(0);
  std::vector<int64_t> size = c.int_list(1);
  c.bool_arg(2);
  if (size.size() < x.shape.size()) c.fail("size has fewer dims than the input");
  const size_t lead = size.size() - x.shape.size();
  for (size_t i = 0; i < size.size(); ++i)
    if (size[i] == -1) {
      if (i < lead) c.fail("-1 in a new leading dim");
      size[i] = x.shape[i - lead];
    }
  c.set_output(kernels::expand(x, size));
}

// aten.repeat.default(self, repeats): repeats may have more dims than the input (new leading dims).
void repeat(const OpContext& c) {
  const HostTensor& x = c.tensor(0);
  const std::vector<int64_t> repeats = c.int_list(1);
  if (repeats.size() < x.shape.size()) c.fail("repeats has fewer dims than the input");
  std::vector<int64_t> shape(repeats.size() - x.shape.size(), 1);
  shape.insert(shape.end(), x.shape.begin(), x.shape.end());
  c.set_output(kernels::tile(kernels::reshape(x, shape), repeats));
}

void pixel_shuffle(const OpContext& c) { c.set_output(kernels::pixel_shuffle(c.tensor(0), c.int_arg(1))); }

}  // namespace

void add_index_ops(OpTable& t) {
  t["aten.eq.Tensor"] = compare<BinaryOp::Equal>;
  t["aten.lt.Tensor"] = compare<BinaryOp::Less>;
  t["aten.le.Tensor"] = compare<BinaryOp::LessOrEqual>;
  t["aten.gt.Tensor"] = compare<BinaryOp::Greater>;
  t["aten.ge.Tensor"] = compare<BinaryOp::GreaterOrEqual>;
  t["aten.eq.Scalar"] = compare_scalar<BinaryOp::Equal>;
  t["aten.lt.Scalar"] = compare_scalar<BinaryOp::Less>;
  t["aten.le.Scalar"] = compare_scalar<BinaryOp::LessOrEqual>;
  t["aten.gt.Scalar"] = compare_scalar<BinaryOp::Greater>;
  t["aten.ge.Scalar"] = compare_scalar<BinaryOp::GreaterOrEqual>;
  t["aten.ne.Scalar"] = compare_scalar<BinaryOp::Equal, true>;
  t["aten.logical_and.default"] = compare<BinaryOp::And>;
  t["aten.logical_or.default"] = compare<BinaryOp::Or>;
  t["aten.bitwise_not.default"] = bitwise_not;
  t["aten.where.self"] = where;
  t["aten._to_copy.default"] = to_copy;
  t["aten.embedding.default"] = embedding;
  t["aten.index_select.default"] = index_select;
  t["aten.gather.default"] = gather;
  t["aten.select_copy.int"] = select_copy;
  t["aten.expand_copy.default"] = expand_copy;
  t["aten.repeat.default"] = repeat;
  t["aten.pixel_shuffle.default"] = pixel_shuffle;
}

}  // namespace vkc::runtime::cpu
