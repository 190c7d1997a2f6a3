// Data movement on the GPU: every operator here is one or more region copies (copy.glsl),
// except view_copy (view.glsl). Dims are converted from NCHW to WHCN (d -> rank - 1 - d).
#include <fmt/format.h>

#include "vk_encoder.h"

namespace vkc::runtime::vk {
namespace {

std::vector<int64_t> contiguous_strides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> s(dims.size(), 1);
  for (size_t d = dims.size(); d-- > 1;) s[d - 1] = s[d] * dims[d];
  return s;
}

// A copy of rank <= 8 between contiguous buffers (copy_nd.glsl): element c of `region` goes from
// in[in_offset + c . in_strides] to out[out_offset + c . out_strides].
void encode_copy_nd(Encoder& e, GpuTensor& out, GpuTensor& in, const std::vector<int64_t>& region,
                    const std::vector<int64_t>& in_strides, const std::vector<int64_t>& out_strides, int64_t in_offset,
                    int64_t out_offset) {
  if (out.texture || in.texture) e.fail("tensors of rank above 4 must be buffers");
  if (in.dtype != out.dtype) e.fail(fmt::format("copy from {} to {} is not supported", in.dtype_name(), out.dtype_name()));
  if (region.size() > 8) e.fail(fmt::format("rank {} is above 8", region.size()));
  ivec4 v[6] = {};
  int64_t count = 1;
  for (size_t d = 0; d < region.size(); ++d) {
    v[d / 4][d % 4] = static_cast<int32_t>(region[d]);
    v[2 + d / 4][d % 4] = static_cast<int32_t>(in_strides[d]);
    v[4 + d / 4][d % 4] = static_cast<int32_t>(out_strides[d]);
    count *= region[d];
  }
  const auto& var = e.variant(out, {}, "copy_nd", "aten.clone.default");
  Push p(var);
  p.iv("dims_lo", v[0]).iv("dims_hi", v[1]).iv("in_strides_lo", v[2]).iv("in_strides_hi", v[3]);
  p.iv("out_strides_lo", v[4]).iv("out_strides_hi", v[5]);
  p.iv("misc", {static_cast<int32_t>(region.size()), static_cast<int32_t>(in_offset), static_cast<int32_t>(out_offset),
                static_cast<int32_t>(count)});
  e.dispatch(var, {out.resource(), in.resource()}, p, count);
}

bool high_rank(const GpuTensor& a, const GpuTensor& b) { return a.dims.size() > 4 || b.dims.size() > 4; }

// A whole contiguous copy (view or clone) of rank > 4.
void copy_linear(Encoder& e, GpuTensor& out, GpuTensor& in) {
  int64_t n = 1;
  for (int64_t d : out.dims) n *= d;
  encode_copy_nd(e, out, in, {n}, {1}, {1}, 0, 0);
}

void prepack(Encoder& e) {
  GpuTensor& out = e.out();
  // Runs once at load: the constant's contiguous buffer -> out's representation.
  encode_copy(e, out, e.is_constant(0) ? e.constant(0, out.dtype) : e.tensor(0), {});
}

void clone(Encoder& e) {
  GpuTensor& out = e.out();
  GpuTensor& in = e.tensor(0, &out);
  if (out.int8x4 || in.int8x4) {  // between packed int8 layouts: here they are one format
    if (!out.int8x4 || !in.int8x4 || out.dims != in.dims) e.fail("int8 activations clone only into their own shape");
    return encode_copy_nd(e, out, in, {out.items()}, {1}, {1}, 0, 0);
  }
  if (high_rank(out, in)) return copy_linear(e, out, in);
  encode_copy(e, out, in, {});
}

void permute_copy(Encoder& e) {
  GpuTensor& out = e.out();
  GpuTensor& in = e.tensor(0, &out);
  const std::vector<int64_t> perm = e.int_list(1);
  const size_t r = in.dims.size();
  if (perm.size() != r) e.fail(fmt::format("{} permutation entries for a rank-{} input", perm.size(), r));
  if (high_rank(out, in)) {
    const std::vector<int64_t> in_strides = contiguous_strides(in.dims);
    std::vector<int64_t> from(r);
    for (size_t i = 0; i < r; ++i) from[i] = in_strides.at(perm[i] < 0 ? perm[i] + static_cast<int64_t>(r) : perm[i]);
    return encode_copy_nd(e, out, in, out.dims, from, contiguous_strides(out.dims), 0, 0);
  }
  CopyRegion c;
  // Input WHCN dim d (NCHW j = r-1-d) sits at output NCHW dim i with perm[i] == j.
  for (size_t d = 0; d < r; ++d) {
    const int64_t j = static_cast<int64_t>(r - 1 - d);
    for (size_t i = 0; i < r; ++i) {
      const int64_t p = perm[i] < 0 ? perm[i] + static_cast<int64_t>(r) : perm[i];
      if (p == j) c.perm[d] = static_cast<int32_t>(r - 1 - i);
    }
  }
  encode_copy(e, out, in, c);
}

void slice_copy(Encoder& e) {
  GpuTensor& out = e.out();
  GpuTensor& in = e.tensor(0, &out);
  const size_t r = in.dims.size();
  int64_t dim = e.int_arg(1);
  if (dim < 0) dim += static_cast<int64_t>(r);
  if (dim < 0 || dim >= static_cast<int64_t>(r) || out.dims.size() != r) e.fail("bad dim or output rank");
  const int64_t size = in.dims[dim], step = e.int_arg(4);
  int64_t start = e.opt_int(2).value_or(0);
  if (start < 0) start += size;
  start = std::clamp<int64_t>(start, 0, size);
  if (step <= 0) e.fail(fmt::format("step {} is not supported (must be positive)", step));
  if (high_rank(out, in)) {
    std::vector<int64_t> from = contiguous_strides(in.dims);
    const int64_t offset = start * from[dim];
    from[dim] *= step;
    return encode_copy_nd(e, out, in, out.dims, from, contiguous_strides(out.dims), offset, 0);
  }
  CopyRegion c;
  const int wd = whcn_dim(dim, r);
  c.in_offset[wd] = static_cast<int32_t>(start);
  c.in_step[wd] = static_cast<int32_t>(step);
  encode_copy(e, out, in, c);
}

void select_copy(Encoder& e) {
  GpuTensor& out = e.out();
  GpuTensor& in = e.tensor(0, &out);
  const size_t r = in.dims.size();
  int64_t dim = e.int_arg(1), index = e.int_arg(2);
  if (dim < 0) dim += static_cast<int64_t>(r);
  if (dim < 0 || dim >= static_cast<int64_t>(r)) e.fail(fmt::format("dim {} is out of range", dim));
  if (index < 0) index += in.dims[dim];
  if (high_rank(out, in)) {
    std::vector<int64_t> from = contiguous_strides(in.dims);
    const int64_t offset = index * from[dim];
    from.erase(from.begin() + dim);
    return encode_copy_nd(e, out, in, out.dims, from, contiguous_strides(out.dims), offset, 0);
  }
  const int ws = whcn_dim(dim, r);
  CopyRegion c;
  for (int d = 0; d < 4; ++d) c.perm[d] = d < ws ? d : d > ws ? d - 1 : 3;
  c.in_offset[ws] = static_cast<int32_t>(index);
  c.in_step[ws] = 0;
  encode_copy(e, out, in, c);
}

void expand_copy(Encoder& e) {
  GpuTensor& out = e.out();
  GpuTensor& in = e.tensor(0, &out);
  if (high_rank(out, in)) {  // broadcast dims read with stride 0 (input dims right-aligned)
    const size_t r = out.dims.size(), pad = r - in.dims.size();
    const std::vector<int64_t> contiguous = contiguous_strides(in.dims);
    std::vector<int64_t> from(r, 0);
    for (size_t d = pad; d < r; ++d) from[d] = in.dims[d - pad] == out.dims[d] ? contiguous[d - pad] : 0;
    return encode_copy_nd(e, out, in, out.dims, from, contiguous_strides(out.dims), 0, 0);
  }
  CopyRegion c;
  for (int d = 0; d < 4; ++d) c.in_step[d] = in.sizes[d] == 1 && out.sizes[d] != 1 ? 0 : 1;
  encode_copy(e, out, in, c);
}

void cat(Encoder& e) {
  GpuTensor& out = e.out();
  const std::vector<int32_t> ids = e.value_list(0);
  const int wd = whcn_dim(e.int_arg(1), out.dims.size());
  // Two textures of the output's dtype and packing: one dispatch (cat2.glsl).
  if (ids.size() == 2 && out.texture && out.dims.size() <= 4 && wd >= 0 && wd < 4) {
    GpuTensor& a = e.tensor_id(ids[0]);
    GpuTensor& b = e.tensor_id(ids[1]);
    const auto same = [&](const GpuTensor& t) {
      return t.texture && t.packed_dim == out.packed_dim && t.dtype == out.dtype && t.dims.size() == out.dims.size();
    };
    if (same(a) && same(b) && a.sizes[wd] + b.sizes[wd] == out.sizes[wd]) {
      const auto& v = e.variant(out, {}, "cat2");
      Push p(v);
      p.iv("out_sizes", out.sizes).iv("in_sizes", a.sizes).iv("other_sizes", b.sizes);
      p.i("dim", wd).i("packed", out.packed_dim);
      e.dispatch(v, {out.resource(), a.resource(), b.resource()}, p, out.items());
      return;
    }
  }
  int32_t offset = 0;
  for (int32_t id : ids) {
    GpuTensor& in = e.tensor_id(id);
    if (in.dims.size() != out.dims.size()) e.fail(fmt::format("input value {} has another rank than the output", id));
    CopyRegion c;
    c.region = in.sizes;
    c.out_offset[wd] = offset;
    encode_copy(e, out, in, c);
    offset += in.sizes[wd];
  }
}

void split_with_sizes_copy(Encoder& e) {
  GpuTensor& in = e.tensor(0);
  const size_t r = in.dims.size();
  const int wd = whcn_dim(e.int_arg(2), r);
  if (wd > 2 && r > 4) {  // a leading dim of a rank 5-8 buffer: each piece is a slice (copy_nd.glsl)
    int64_t dim = e.int_arg(2);
    if (dim < 0) dim += static_cast<int64_t>(r);
    if (dim < 0 || dim >= static_cast<int64_t>(r)) e.fail("bad dim");
    const std::vector<int64_t> from = contiguous_strides(in.dims);
    int64_t start = 0;
    for (int32_t id : e.value_list(e.num_args() - 1)) {
      GpuTensor& out = e.tensor_id(id);
      if (out.dims.size() != r) e.fail(fmt::format("output value {} has another rank than the input", id));
      encode_copy_nd(e, out, in, out.dims, from, contiguous_strides(out.dims), start * from[dim], 0);
      start += out.dims[dim];
    }
    return;
  }
  int32_t offset = 0;
  for (int32_t id : e.value_list(e.num_args() - 1)) {
    GpuTensor& out = e.tensor_id(id);
    CopyRegion c;
    c.in_offset[wd] = offset;
    encode_copy(e, out, in, c);
    offset += out.sizes[wd];
  }
}

void constant_pad_nd(Encoder& e) {
  GpuTensor& out = e.out();
  GpuTensor& in = e.tensor(0, &out);
  const std::vector<int64_t> pad = e.int_list(1);
  if (pad.size() % 2 || pad.size() / 2 > in.dims.size()) e.fail(fmt::format("{} pads for a rank-{} input", pad.size(), in.dims.size()));
  CopyRegion c;
  for (size_t k = 0; k < pad.size() / 2; ++k) c.in_offset[k] = static_cast<int32_t>(-pad[2 * k]);  // WHCN dim k
  c.fill = static_cast<float>(e.scalar_arg(2));
  encode_copy(e, out, in, c);
}

void view_copy(Encoder& e) {
  GpuTensor& out = e.out();
  GpuTensor& in = e.tensor(0, &out);
  e.require_rep(in, out, "the input", false);
  if (high_rank(out, in)) return copy_linear(e, out, in);
  // A clone (a layout transition, as before a linear) that alone reads the view: one view dispatch
  // into the clone's output (fused at load).
  if (const serializer::VkOperatorCall* c = e.sole_next("aten.clone.default")) {
    GpuTensor& to = e.tensor_id(c->args.back());
    if (to.texture == in.texture && to.dtype == in.dtype && to.dims == out.dims && !to.int8x4 && !high_rank(to, in)) {
      e.absorb_next();
      return encode_view(e, to, in);
    }
  }
  encode_view(e, out, in);
}

// pixel_shuffle(self [N, C r^2, H, W], upscale_factor r) -> [N, C, H r, W r] (gather_copy.glsl).
void pixel_shuffle(Encoder& e) {
  GpuTensor& out = e.out();
  GpuTensor& in = e.tensor(0, &out);
  e.require_rep(in, out, "the input", false);
  if (in.dims.size() != 4 || out.dims.size() != 4) e.fail("pixel_shuffle needs rank-4 tensors");
  const auto r = static_cast<int32_t>(e.int_arg(1));
  if (r <= 0 || in.sizes[2] != out.sizes[2] * r * r) e.fail(fmt::format("upscale factor {} does not fit the channels", r));
  const auto& v = e.variant(out);
  Push p(v);
  p.iv("out_sizes", out.sizes).iv("in_sizes", in.sizes).iv("packed_dims", {out.packed_dim, in.packed_dim, 0, 0});
  p.i("factor", r);
  e.dispatch(v, {out.resource(), in.resource()}, p, out.items());
}

// index_select(self, dim, index) with a 1-D index, and gather(self, dim, index) with an index
// shaped like the output (`elements`); both index_select.glsl (gather: ELEMENTS 1). The index
// is an int tensor, constant or computed, in the output's storage.
void select_along(Encoder& e, bool elements) {
  GpuTensor& out = e.out();
  GpuTensor& in = e.tensor(0, &out);
  e.require_rep(in, out, "the input", false);
  GpuTensor like;  // a constant index is materialized as i32 in the output's storage
  like.dtype = ir::DType::Int32;
  like.texture = out.texture;
  like.packed_dim = out.packed_dim;
  GpuTensor& index = e.tensor(2, &like);
  const bool shape_ok = elements ? index.dims == out.dims : index.dims.size() == 1;
  if (index.texture != out.texture || index.dtype != ir::DType::Int32 || !shape_ok)
    e.fail(elements ? "the index must be an int tensor shaped like the output, in its storage"
                    : "the index must be a 1-D int tensor in the output's storage");
  const int dim = whcn_dim(e.int_arg(1), in.dims.size());
  if (dim < 0 || dim >= static_cast<int>(in.dims.size()) || in.dims.size() > 4 ||
      (elements && in.dims.size() != out.dims.size()))
    e.fail("dim is out of range, or the ranks differ or exceed 4");
  const auto& v = e.variant(out);
  Push p(v);
  p.iv("out_sizes", out.sizes).iv("in_sizes", in.sizes).iv("index_sizes", index.sizes);
  p.iv("packed_dims", {out.packed_dim, in.packed_dim, index.packed_dim, 0}).i("dim", dim);
  e.dispatch(v, {out.resource(), in.resource(), index.resource()}, p, out.items());
}

void index_select(Encoder& e) { select_along(e, false); }
void gather(Encoder& e) { select_along(e, true); }

// repeat(self, repeats): tiles self (rank <= 4, output rank <= 4) (gather_copy.glsl).
void repeat(Encoder& e) {
  GpuTensor& out = e.out();
  GpuTensor& in = e.tensor(0, &out);
  e.require_rep(in, out, "the input", false);
  if (out.dims.size() > 4) e.fail("the output has rank > 4");
  const auto& v = e.variant(out);
  Push p(v);
  p.iv("out_sizes", out.sizes).iv("in_sizes", in.sizes).iv("packed_dims", {out.packed_dim, in.packed_dim, 0, 0});
  p.i("factor", 1);
  e.dispatch(v, {out.resource(), in.resource()}, p, out.items());
}

}  // namespace

void encode_view(Encoder& e, GpuTensor& out, GpuTensor& in) {
  const auto& v = e.variant(out, {}, {}, "aten.view_copy.default");
  Push p(v);
  p.iv("out_sizes", out.sizes).iv("in_sizes", in.sizes).iv("packed_dims", {out.packed_dim, in.packed_dim, 0, 0});
  e.dispatch(v, {out.resource(), in.resource()}, p, out.items());
}

void add_copy_ops(std::unordered_map<std::string, OpEncoder>& t) {
  t["et_vk.prepack.default"] = prepack;
  t["aten.clone.default"] = clone;
  t["aten.permute_copy.default"] = permute_copy;
  t["aten.slice_copy.Tensor"] = slice_copy;
  t["aten.select_copy.int"] = select_copy;
  t["aten.expand_copy.default"] = expand_copy;
  t["aten.cat.default"] = cat;
  t["aten.split_with_sizes_copy.default"] = split_with_sizes_copy;
  t["aten.constant_pad_nd.default"] = constant_pad_nd;
  t["aten.view_copy.default"] = view_copy;
  t["aten.pixel_shuffle.default"] = pixel_shuffle;
  t["aten.repeat.default"] = repeat;
  t["aten.index_select.default"] = index_select;
  t["aten.gather.default"] = gather;
}

}  // namespace vkc::runtime::vk
