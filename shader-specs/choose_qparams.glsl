#version 450
// Per-row asymmetric qparams (see choose_qparams.yaml). Row m of x (WHCN (k, h, c, n), m the
// index over (h, c, n)) gives element m of scale and zero point, whose WHCN is (h, c, n, 0).
#include "vkc_common.glslh"

layout(local_size_x = LOCAL_SIZE_X, local_size_y = LOCAL_SIZE_Y, local_size_z = LOCAL_SIZE_Z) in;

#if defined(STORAGE_buffer)
layout(set = 0, binding = 0, std430) restrict writeonly buffer ScaleBuf { T t_scale[]; };
layout(set = 0, binding = 1, std430) restrict writeonly buffer ZpBuf { int t_zp[]; };
layout(set = 0, binding = 2, std430) restrict readonly buffer InBuf { T t_in[]; };
#else
layout(set = 0, binding = 0, IMAGE_FORMAT) uniform restrict writeonly IMAGE_T t_scale;
layout(set = 0, binding = 1, rgba32i) uniform restrict writeonly iimage3D t_zp;
layout(set = 0, binding = 2, IMAGE_FORMAT) uniform restrict readonly IMAGE_T t_in;
#endif

layout(push_constant) uniform Params {
  ivec4 in_sizes;
  int qmin;
  int qmax;
  float eps;
} p;

float load(ivec4 w) { return float(TENSOR_AT(t_in, w, p.in_sizes, 0)); }

// (scale, zero point) of the row at WHCN (., h, c, n).
vec2 qparams(ivec3 row) {
  float lo = 0.0, hi = 0.0;
  for (int k = 0; k < p.in_sizes.x; ++k) {
    const float v = load(ivec4(k, row));
    lo = min(lo, v);
    hi = max(hi, v);
  }
  const float s = max((hi - lo) / float(p.qmax - p.qmin), p.eps);
  return vec2(s, clamp(float(p.qmin) - roundEven(lo / s), float(p.qmin), float(p.qmax)));
}

void main() {
  const int i = global_index();
  const ivec4 out_sizes = ivec4(p.in_sizes.yzw, 1);
#if defined(STORAGE_buffer)
  if (i >= numel(out_sizes)) return;
  const ivec4 w = index_to_whcn(i, out_sizes);
  const vec2 q = qparams(w.xyz);
  t_scale[i] = T(q.x);
  t_zp[i] = int(q.y);
#else
  const ivec3 extents = texture_extents(out_sizes, 0);
  if (i >= extents.x * extents.y * extents.z) return;
  const ivec3 pos = index_to_pos(i, extents);
  const ivec4 base = texel_to_whcn(pos, out_sizes, 0);
  vec4 s = vec4(0.0);
  ivec4 z = ivec4(0);
  for (int lane = 0; lane < 4 && base.x + lane < out_sizes.x; ++lane) {
    const vec2 q = qparams(ivec3(base.x + lane, base.yz));
    s[lane] = q.x;
    z[lane] = int(q.y);
  }
  imageStore(t_scale, pos, VEC4_T(s));
#if defined(DTYPE_f16)
#undef imageStore  // the zero point is an integer image: no f16 rounding (vkc_common.glslh)
#endif
  imageStore(t_zp, pos, z);
#endif
}
