#version 450
// 2-D upsampling on channels-packed textures, nearest or bilinear (4 channels per invocation).
// scale = input pixels per output pixel: in/out (or 1/scale_factor), or (in-1)/(out-1) with
// align_corners. Nearest: src = min(floor(dst * scale), in - 1) (PyTorch "nearest").
// Bilinear: src = dst * scale with align_corners, else max((dst + 0.5) * scale - 0.5, 0).
#include "vkc_common.glslh"

layout(local_size_x = LOCAL_SIZE_X, local_size_y = LOCAL_SIZE_Y, local_size_z = LOCAL_SIZE_Z) in;

#include "vkc_out_in.glslh"

layout(push_constant) uniform Params {
  ivec4 out_sizes;
  ivec4 in_sizes;
  vec2 scale;  // (x, y)
  int align_corners;
} p;

void main() {
  const int idx = global_index();
  const ivec3 extents = texture_extents(p.out_sizes, 2);
  if (idx >= extents.x * extents.y * extents.z) return;
  const ivec3 pos = index_to_pos(idx, extents);
  const ivec2 last = p.in_sizes.xy - 1;
#if defined(MODE_nearest)
  const ivec2 src = min(ivec2(floor(vec2(pos.xy) * p.scale)), last);
  const vec4 r = vec4(imageLoad(t_in, ivec3(src, pos.z)));
#else
  const vec2 s = p.align_corners != 0 ? vec2(pos.xy) * p.scale : max((vec2(pos.xy) + 0.5) * p.scale - 0.5, vec2(0.0));
  const ivec2 s0 = min(ivec2(floor(s)), last);
  const ivec2 s1 = min(s0 + 1, last);
  const vec2 f = s - vec2(s0);
  const vec4 top = mix(vec4(imageLoad(t_in, ivec3(s0.x, s0.y, pos.z))), vec4(imageLoad(t_in, ivec3(s1.x, s0.y, pos.z))), f.x);
  const vec4 bottom = mix(vec4(imageLoad(t_in, ivec3(s0.x, s1.y, pos.z))), vec4(imageLoad(t_in, ivec3(s1.x, s1.y, pos.z))), f.x);
  const vec4 r = mix(top, bottom, f.y);
#endif
  imageStore(t_out, pos, VEC4_T(r));
}
