#version 450
// Strided region copy between any two representations; serves clone (layout/storage
// transitions), permute_copy, slice_copy, split_with_sizes_copy, cat (one dispatch per input),
// constant_pad_nd and prepack/staging (a contiguous buffer to or from a tensor).
//
// For every output element `o` inside the region [out_offset, out_offset + region):
//   r = o - out_offset;  s[d] = r[perm[d]];  i = in_offset + s * in_step
//   out[o] = in_bounds(i) ? in[i] : fill
// Output elements outside the region keep their value (texture lanes are read back first).
// Dispatch: one invocation per output element (buffer; per input texel for identity copies from a
// texture) or per output texel of the region's box (texture3d).
#include "vkc_common.glslh"

layout(local_size_x = LOCAL_SIZE_X, local_size_y = LOCAL_SIZE_Y, local_size_z = LOCAL_SIZE_Z) in;

// Staging variants (STAGING in/out): the host side is an f32 buffer, converted here to and from
// the tensor's dtype (f16), so the host only copies bytes.
#if defined(STAGING_out)
#define OUT_T float
#else
#define OUT_T T
#endif
#if defined(STAGING_in)
#define IN_T float
#else
#define IN_T T
#endif

#if defined(OUT_STORAGE_buffer)
layout(set = 0, binding = 0, std430) restrict VKC_IN_COHERENT buffer OutBuf { OUT_T t_out[]; };
#else
layout(set = 0, binding = 0, IMAGE_FORMAT) uniform restrict VKC_IN_COHERENT IMAGE_T t_out;
#endif
#if defined(IN_STORAGE_buffer)
layout(set = 0, binding = 1, std430) restrict VKC_IN_COHERENT readonly buffer InBuf { IN_T t_in[]; };
#else
layout(set = 0, binding = 1, IMAGE_FORMAT) uniform restrict VKC_IN_COHERENT readonly IMAGE_T t_in;
#endif

layout(push_constant) uniform Params {
  ivec4 out_sizes;
  ivec4 in_sizes;
  ivec4 region;
  ivec4 out_offset;
  ivec4 in_offset;
  ivec4 in_step;
  ivec4 perm;
  ivec2 packed_dims;  // textures: (out, in)
  float fill;
#if defined(VKC_CHAIN_BINDING)
  ivec4 chain;  // chained dispatches (vkc_chain.glslh)
#endif
} p;

// (_chain twins: the copy runs between the chained dispatches' wait and count; the output is
// coherent too, as texels the region covers in part are read back)
#include "vkc_chain.glslh"

bool in_region(ivec4 o) { return in_bounds(o - p.out_offset, p.region); }

SCALAR_T value_at(ivec4 o) {
  const ivec4 r = o - p.out_offset;
  const ivec4 s = ivec4(r[p.perm.x], r[p.perm.y], r[p.perm.z], r[p.perm.w]);
  const ivec4 i = p.in_offset + s * p.in_step;
  if (!in_bounds(i, p.in_sizes)) return SCALAR_T(p.fill);
#if defined(IN_STORAGE_buffer)
  return SCALAR_T(t_in[whcn_to_index(i, p.in_sizes)]);
#else
  const ivec4 t = whcn_to_texel(i, p.in_sizes, p.packed_dims.y);
  return VEC4_T(imageLoad(t_in, t.xyz))[t.w];
#endif
}

// The texels of the output that the region touches: from lane 0 of out_offset's texel to
// out_offset + region - 1's (the runtime dispatches this box's volume, vk_encoder.cpp).
void region_box(out ivec3 lo, out ivec3 extent) {
  const ivec4 first = p.out_offset, last = min(p.out_offset + p.region, p.out_sizes) - 1;
  lo = whcn_to_texel(first, p.out_sizes, p.packed_dims.x).xyz;
  extent = whcn_to_texel(last, p.out_sizes, p.packed_dims.x).xyz - lo + 1;
}

// Identity copies (staging, clone) from a texture to a buffer: an invocation per input texel
// writes its lanes, so each texel is read once.
bool identity_copy() {
  return p.out_offset == ivec4(0) && p.in_offset == ivec4(0) && p.in_step == ivec4(1) && p.perm == ivec4(0, 1, 2, 3) &&
         p.region == p.out_sizes && p.in_sizes == p.out_sizes;
}

void copy_region() {
  const int idx = global_index();
#if defined(OUT_STORAGE_buffer)
#if !defined(IN_STORAGE_buffer)
  if (identity_copy()) {
    const ivec3 extents = texture_extents(p.in_sizes, p.packed_dims.y);
    if (idx >= extents.x * extents.y * extents.z) return;
    const ivec3 pos = index_to_pos(idx, extents);
    const ivec4 base = texel_to_whcn(pos, p.in_sizes, p.packed_dims.y);
    const ivec4 step = dim_unit(p.packed_dims.y);
    const VEC4_T v = VEC4_T(imageLoad(t_in, pos));
    for (int lane = 0; lane < 4; ++lane) {
      const ivec4 o = base + lane * step;
      if (in_bounds(o, p.out_sizes)) t_out[whcn_to_index(o, p.out_sizes)] = OUT_T(v[lane]);
    }
    return;
  }
#endif
  if (idx >= numel(p.out_sizes)) return;
  const ivec4 o = index_to_whcn(idx, p.out_sizes);
  if (in_region(o)) t_out[idx] = OUT_T(value_at(o));
#else
  ivec3 lo, box;
  region_box(lo, box);
  if (idx >= box.x * box.y * box.z) return;
  const ivec3 pos = lo + index_to_pos(idx, box);
  const ivec4 base = texel_to_whcn(pos, p.out_sizes, p.packed_dims.x);
  const ivec4 step = dim_unit(p.packed_dims.x);
  bool any_in = false, all_in = true;
  for (int lane = 0; lane < 4; ++lane) {
    const bool inside = in_region(base + lane * step) && in_bounds(base + lane * step, p.out_sizes);
    any_in = any_in || inside;
    all_in = all_in && inside;
  }
  if (!any_in) return;
#if !defined(IN_STORAGE_buffer)
  // Whole texels: when the 4 lanes are the 4 lanes of one input texel, one load.
  if (all_in && p.perm[p.packed_dims.y] == p.packed_dims.x && p.in_step[p.packed_dims.y] == 1) {
    const ivec4 r = base - p.out_offset;
    const ivec4 i = p.in_offset + ivec4(r[p.perm.x], r[p.perm.y], r[p.perm.z], r[p.perm.w]) * p.in_step;
    if ((i[p.packed_dims.y] & 3) == 0 && in_bounds(i + 3 * dim_unit(p.packed_dims.y), p.in_sizes) &&
        in_bounds(i, p.in_sizes)) {
      imageStore(t_out, pos, imageLoad(t_in, whcn_to_texel(i, p.in_sizes, p.packed_dims.y).xyz));
      return;
    }
  }
#endif
  VEC4_T v = all_in ? VEC4_T(0) : VEC4_T(imageLoad(t_out, pos));
  for (int lane = 0; lane < 4; ++lane) {
    const ivec4 o = base + lane * step;
    if (in_region(o) && in_bounds(o, p.out_sizes)) v[lane] = value_at(o);
  }
  imageStore(t_out, pos, v);
#endif
}

void main() {
  chain_wait();
  copy_region();
  chain_done();
}
