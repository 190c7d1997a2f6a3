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

// (scale, zero point) of a row whose min and max (each with 0) are lo and hi.
vec2 params_of(float lo, float hi) {
  const float s = max((hi - lo) / float(p.qmax - p.qmin), p.eps);
  return vec2(s, clamp(float(p.qmin) - roundEven(lo / s), float(p.qmin), float(p.qmax)));
}

#if defined(STORAGE_buffer)
void store_element(int i, float lo, float hi) {
  const vec2 q = params_of(lo, hi);
  t_scale[i] = T(q.x);
  t_zp[i] = int(q.y);
}
#else
// The `lanes` rows of one output texel, lane by lane.
void store_texel(ivec3 pos, vec4 lo, vec4 hi, int lanes) {
  vec4 s = vec4(0.0);
  ivec4 z = ivec4(0);
  for (int lane = 0; lane < lanes; ++lane) {
    const vec2 q = params_of(lo[lane], hi[lane]);
    s[lane] = q.x;
    z[lane] = int(q.y);
  }
  imageStore(t_scale, pos, VEC4_T(s));
#if defined(DTYPE_f16)
#undef imageStore  // the zero point is an integer image: no f16 rounding (vkc_common.glslh)
#endif
  imageStore(t_zp, pos, z);
}
#endif

#if defined(SPLIT_k)
// Invocation t of a workgroup reduces elements t, t + 64, ... of its row(s); shared memory finishes.
shared vec4 s_lo[LOCAL_SIZE_X], s_hi[LOCAL_SIZE_X];

// min/max (with 0) over the rows `row0` + lane (lanes < `lanes`), combined across the workgroup.
void min_max(ivec3 row0, int lanes, out vec4 lo, out vec4 hi) {
  const int t = int(gl_LocalInvocationID.x);
  lo = vec4(0.0);
  hi = vec4(0.0);
  for (int lane = 0; lane < lanes; ++lane)
    for (int k = t; k < p.in_sizes.x; k += LOCAL_SIZE_X) {
      const float v = load(ivec4(k, row0.x + lane, row0.yz));
      lo[lane] = min(lo[lane], v);
      hi[lane] = max(hi[lane], v);
    }
  s_lo[t] = lo;
  s_hi[t] = hi;
  barrier();
  for (int stride = LOCAL_SIZE_X / 2; stride > 0; stride /= 2) {
    if (t < stride) {
      s_lo[t] = min(s_lo[t], s_lo[t + stride]);
      s_hi[t] = max(s_hi[t], s_hi[t + stride]);
    }
    barrier();
  }
  lo = s_lo[0];
  hi = s_hi[0];
}

// A workgroup per output element / texel; invocation 0 stores.
void main() {
  const int unit = global_index() / LOCAL_SIZE_X;
  const bool store = gl_LocalInvocationID.x == 0;
#else
// min/max (with 0) over the rows `row0` + lane (lanes < `lanes`), by this invocation alone.
void min_max(ivec3 row0, int lanes, out vec4 lo, out vec4 hi) {
  lo = vec4(0.0);
  hi = vec4(0.0);
  for (int lane = 0; lane < lanes; ++lane)
    for (int k = 0; k < p.in_sizes.x; ++k) {
      const float v = load(ivec4(k, row0.x + lane, row0.yz));
      lo[lane] = min(lo[lane], v);
      hi[lane] = max(hi[lane], v);
    }
}

// An invocation per output element / texel.
void main() {
  const int unit = global_index();
  const bool store = true;
#endif
  const ivec4 out_sizes = ivec4(p.in_sizes.yzw, 1);
  vec4 lo, hi;
#if defined(STORAGE_buffer)
  const bool live = unit < numel(out_sizes);
  min_max(index_to_whcn(live ? unit : 0, out_sizes).xyz, live ? 1 : 0, lo, hi);
  if (store && live) store_element(unit, lo.x, hi.x);
#else
  const ivec3 extents = texture_extents(out_sizes, 0);
  const bool live = unit < extents.x * extents.y * extents.z;
  const ivec3 pos = index_to_pos(live ? unit : 0, extents);
  const ivec4 base = texel_to_whcn(pos, out_sizes, 0);
  const int lanes = live ? min(4, out_sizes.x - base.x) : 0;
  min_max(base.xyz, lanes, lo, hi);
  if (store && live) store_texel(pos, lo, hi, lanes);
#endif
}
