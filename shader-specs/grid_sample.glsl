#version 450
// out (WHCN (wo, ho, c, n)) = in sampled at the pixel coordinate of grid (n, ho, wo, 0..1):
// unnormalized ((g + 1) / 2 * (size - 1) with align_corners, else ((g + 1) * size - 1) / 2), then
// mirrored (reflection) and clamped (border, reflection); bilinear taps or the nearest pixel
// outside the input read 0.
#include "vkc_common.glslh"

layout(local_size_x = LOCAL_SIZE_X, local_size_y = LOCAL_SIZE_Y, local_size_z = LOCAL_SIZE_Z) in;

#include "vkc_out_in.glslh"
#if defined(STORAGE_buffer)
layout(set = 0, binding = 2, std430) restrict readonly buffer GridBuf { T t_grid[]; };
#else
layout(set = 0, binding = 2, IMAGE_FORMAT) uniform restrict readonly IMAGE_T t_grid;
#endif

layout(push_constant) uniform Params {
  ivec4 out_sizes;
  ivec4 in_sizes;
  ivec4 grid_sizes;
  ivec4 packed_dims;  // out, in, grid
  int mode;           // 0 bilinear, 1 nearest
  int padding;        // 0 zeros, 1 border, 2 reflection
  int align_corners;
} p;

float pixel(float g, int size) {
  const float n = float(size);
  float v = p.align_corners != 0 ? (g + 1.0) * 0.5 * (n - 1.0) : ((g + 1.0) * n - 1.0) * 0.5;
  if (p.padding == 2) {
    const float lo = p.align_corners != 0 ? 0.0 : -0.5;
    const float span = p.align_corners != 0 ? n - 1.0 : n;
    if (span <= 0.0) return 0.0;
    const float d = abs(v - lo);
    const float extra = mod(d, span);
    v = (int(floor(d / span)) % 2 == 0) ? lo + extra : lo + span - extra;
  }
  if (p.padding >= 1) v = clamp(v, 0.0, n - 1.0);
  return v;
}

float read_in(ivec4 w) {
  if (!in_bounds(w, p.in_sizes)) return 0.0;
  return float(TENSOR_AT(t_in, w, p.in_sizes, p.packed_dims.y));
}

SCALAR_T source(ivec4 w) {
  const float gx = float(TENSOR_AT(t_grid, ivec4(0, w.x, w.y, w.w), p.grid_sizes, p.packed_dims.z));
  const float gy = float(TENSOR_AT(t_grid, ivec4(1, w.x, w.y, w.w), p.grid_sizes, p.packed_dims.z));
  const float px = pixel(gx, p.in_sizes.x), py = pixel(gy, p.in_sizes.y);
  if (p.mode == 1) return SCALAR_T(read_in(ivec4(int(roundEven(px)), int(roundEven(py)), w.z, w.w)));
  const vec2 f0 = floor(vec2(px, py));
  const vec2 f = vec2(px, py) - f0;
  const ivec2 i0 = ivec2(f0);
  const float top = mix(read_in(ivec4(i0.x, i0.y, w.z, w.w)), read_in(ivec4(i0.x + 1, i0.y, w.z, w.w)), f.x);
  const float bottom = mix(read_in(ivec4(i0.x, i0.y + 1, w.z, w.w)), read_in(ivec4(i0.x + 1, i0.y + 1, w.z, w.w)), f.x);
  return SCALAR_T(mix(top, bottom, f.y));
}

#include "vkc_gather_main.glslh"
