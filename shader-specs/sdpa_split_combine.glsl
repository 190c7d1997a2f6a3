#version 450
// Flash-decoding's combine (sdpa_split_combine.yaml): an invocation per output texel of a query row
// adds up the parts sdpa_kv_cache_fused_split wrote for that row.
#include "vkc_common.glslh"

layout(local_size_x = LOCAL_SIZE_X, local_size_y = LOCAL_SIZE_Y, local_size_z = LOCAL_SIZE_Z) in;

#include "vkc_out.glslh"
layout(set = 0, binding = 1, std430) restrict readonly buffer PartialBuf { vec4 t_partial[]; };

layout(push_constant) uniform Params {
  ivec4 out_sizes;
  int splits;
  int out_merge;
} p;

void main() {
  const int dv4 = div_up4(p.out_sizes.x), rows = p.out_sizes.y * p.out_sizes.z;
  const int i = global_index(), row = i / dv4, x4 = i % dv4;
  if (row >= rows) return;
  const int stride = dv4 + 1, first = row * p.splits;
  float m = -1.0 / 0.0;
  for (int g = 0; g < p.splits; ++g) m = max(m, t_partial[(first + g) * stride].x);
  float sum = 0.0;
  vec4 acc = vec4(0.0);
  for (int g = 0; g < p.splits; ++g) {
    const vec4 head = t_partial[(first + g) * stride];
    if (head.x == -1.0 / 0.0) continue;  // a part without keys
    const float w = exp(head.x - m);
    sum += head.y * w;
    acc += t_partial[(first + g) * stride + 1 + x4] * w;
  }
  const vec4 value = acc / sum;
  const int s = row / p.out_sizes.y, h = row % p.out_sizes.y;
#if defined(STORAGE_buffer)
  const int base = whcn_to_index(ivec4(x4 * 4, h, s, 0), p.out_sizes);
  for (int l = 0; l < 4; ++l)
    if (x4 * 4 + l < p.out_sizes.x) t_out[base + l] = T(value[l]);
#else
  if (p.out_merge != 0) imageStore(t_out, ivec3(h * (p.out_sizes.x / 4) + x4, s, 0), VEC4_T(value));
  else imageStore(t_out, ivec3(x4, h, s), VEC4_T(value));
#endif
}
