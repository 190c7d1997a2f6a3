// Convolution and matrix products.
#include "op_context.h"
#include "vkc/kernels/activation.h"
#include "vkc/kernels/conv.h"
#include "vkc/kernels/linear.h"

namespace vkc::runtime::cpu {
namespace {

// aten.convolution.default(input, weight, bias?, stride, padding, dilation, transposed, output_padding, groups)
HostTensor conv(const OpContext& c) {
  kernels::ConvParams p;
  p.stride = c.int_list(3);
  p.padding = c.int_list(4);
  p.dilation = c.int_list(5);
  p.transposed = c.bool_arg(6);
  p.output_padding = c.int_list(7);
  p.groups = c.int_arg(8);
  return kernels::convolution(c.tensor(0), c.tensor(1), c.opt_tensor(2), p);
}

void convolution(const OpContext& c) { c.set_output(conv(c)); }

// et_vk.conv_with_clamp.default(... convolution args ..., output_min?, output_max?)
void conv_with_clamp(const OpContext& c) { c.set_output(kernels::clamp(conv(c), c.opt_scalar(9), c.opt_scalar(10))); }

void linear(const OpContext& c) { c.set_output(kernels::linear(c.tensor(0), c.tensor(1), c.opt_tensor(2))); }

// aten.addmm.default(self, mat1, mat2, *, beta, alpha)
void addmm(const OpContext& c) {
  c.set_output(kernels::addmm(c.tensor(0), c.tensor(1), c.tensor(2), c.scalar_arg(3), c.scalar_arg(4)));
}

void mm(const OpContext& c) {
  if (c.tensor(0).shape.size() != 2 || c.tensor(1).shape.size() != 2) c.fail("mm needs 2-D operands");
  c.set_output(kernels::matmul(c.tensor(0), c.tensor(1)));
}

void bmm(const OpContext& c) {
  if (c.tensor(0).shape.size() != 3 || c.tensor(1).shape.size() != 3) c.fail("bmm needs 3-D operands");
  c.set_output(kernels::matmul(c.tensor(0), c.tensor(1)));
}

}  // namespace

void add_conv_linear_ops(OpTable& t) {
  t["aten.convolution.default"] = convolution;
  t["et_vk.conv_with_clamp.default"] = conv_with_clamp;
  t["aten.linear.default"] = linear;
  t["aten.addmm.default"] = addmm;
  t["aten.mm.default"] = mm;
  t["aten.bmm.default"] = bmm;
}

}  // namespace vkc::runtime::cpu
