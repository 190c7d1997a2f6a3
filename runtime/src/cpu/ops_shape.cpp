// Data movement: view, permute, cat, slice, split, pad, clone, prepack.
#include <fmt/format.h>

#include <limits>

#include "op_context.h"
#include "vkc/kernels/data_movement.h"
#include "vkc/kernels/shape_ops.h"

namespace vkc::runtime::cpu {
namespace {

// aten.view_copy.default(self, size): one size may be -1.
void view_copy(const OpContext& c) {
  const HostTensor& x = c.tensor(0);
  std::vector<int64_t> size = c.int_list(1);
  int64_t known = 1, infer = -1;
  for (size_t i = 0; i < size.size(); ++i) {
    if (size[i] == -1 && infer < 0) infer = static_cast<int64_t>(i);
    else if (size[i] < 0) c.fail(fmt::format("size [{}] is not a shape", fmt::join(size, ",")));
    else if (__builtin_mul_overflow(known, size[i], &known)) c.fail(fmt::format("size [{}] overflows", fmt::join(size, ",")));
  }
  if (infer >= 0) size[infer] = known ? x.numel() / known : 0;
  HostTensor r = kernels::reshape(x, size);
  c.set_output(std::move(r));
}

void permute_copy(const OpContext& c) { c.set_output(kernels::transpose(c.tensor(0), c.int_list(1))); }

// aten.cat.default(tensors, dim)
void cat(const OpContext& c) {
  std::vector<const HostTensor*> parts = c.tensor_list(0);
  if (parts.empty()) c.fail("cat of no tensors");
  c.set_output(kernels::concat(parts, c.int_arg(1)));
}

// aten.slice_copy.Tensor(self, dim, start?, end?, step): bounds clamp like Python slicing.
void slice_copy(const OpContext& c) {
  const int64_t step = c.int_arg(4);
  if (step <= 0) c.fail(fmt::format("step {} is not positive", step));
  const auto start = c.opt_int(2).value_or(0);
  const auto end = c.opt_int(3).value_or(std::numeric_limits<int64_t>::max());
  c.set_output(kernels::slice(c.tensor(0), {start}, {end}, {c.int_arg(1)}, {step}));
}

// aten.split_with_sizes_copy.default(self, split_sizes, dim) -> Tensor[]
void split_with_sizes(const OpContext& c) {
  c.set_outputs(kernels::split_with_sizes(c.tensor(0), c.int_list(1), c.int_arg(2)));
}

// aten.constant_pad_nd.default(self, pad, value)
void constant_pad(const OpContext& c) {
  c.set_output(kernels::constant_pad_nd(c.tensor(0), c.int_list(1), c.scalar_arg(2)));
}

// aten.clone.default(self, *, memory_format=None): on the GPU a layout transition; here a copy.
void clone(const OpContext& c) {
  if (!c.is_null(1)) c.fail("memory_format must be None");
  c.set_output(c.tensor(0));
}

// et_vk.prepack.default(x): a constant (TensorRef) staged into a tensor.
void prepack(const OpContext& c) { c.set_output(c.tensor(0)); }

}  // namespace

void add_shape_ops(OpTable& t) {
  t["aten.view_copy.default"] = view_copy;
  t["aten.permute_copy.default"] = permute_copy;
  t["aten.cat.default"] = cat;
  t["aten.slice_copy.Tensor"] = slice_copy;
  t["aten.split_with_sizes_copy.default"] = split_with_sizes;
  t["aten.constant_pad_nd.default"] = constant_pad;
  t["aten.clone.default"] = clone;
  t["et_vk.prepack.default"] = prepack;
}

const OpTable& op_table() {
  static const OpTable table = [] {
    OpTable t;
    add_conv_linear_ops(t);
    add_elementwise_ops(t);
    add_index_ops(t);
    add_norm_pool_ops(t);
    add_shape_ops(t);
    add_llm_ops(t);
    add_quant_ops(t);
    return t;
  }();
  return table;
}

}  // namespace vkc::runtime::cpu
