#version 450
// 2-D max and average pooling on channels-packed textures (4 channels per invocation).
// Average pooling follows PyTorch: with count_include_pad the divisor counts the window
// clipped to the padded input, otherwise only the valid elements; divisor_override > 0 wins.
// max_pool2d_with_indices: only the values (output 0) are written.
#include "vkc_common.glslh"

layout(local_size_x = LOCAL_SIZE_X, local_size_y = LOCAL_SIZE_Y, local_size_z = LOCAL_SIZE_Z) in;

#include "vkc_out_in.glslh"

layout(push_constant) uniform Params {
  ivec4 out_sizes;
  ivec4 in_sizes;
  ivec4 kernel_stride;  // (K_w, K_h, stride_w, stride_h)
  ivec4 pad_dilation;   // (pad_w, pad_h, dilation_w, dilation_h); dilation is 1 for avg
  int count_include_pad;
  int divisor_override;  // 0: none
} p;

void main() {
  const int idx = global_index();
  const ivec3 extents = texture_extents(p.out_sizes, 2);
  if (idx >= extents.x * extents.y * extents.z) return;
  const ivec3 pos = index_to_pos(idx, extents);
  const ivec2 start = pos.xy * p.kernel_stride.zw - p.pad_dilation.xy;
#if defined(POOL_max)
  vec4 acc = vec4(-3.402823466e38);
  for (int ky = 0; ky < p.kernel_stride.y; ++ky) {
    const int iy = start.y + ky * p.pad_dilation.w;
    if (iy < 0 || iy >= p.in_sizes.y) continue;
    for (int kx = 0; kx < p.kernel_stride.x; ++kx) {
      const int ix = start.x + kx * p.pad_dilation.z;
      if (ix < 0 || ix >= p.in_sizes.x) continue;
      acc = max(acc, vec4(imageLoad(t_in, ivec3(ix, iy, pos.z))));
    }
  }
#else
  const ivec2 end_padded = min(start + p.kernel_stride.xy, p.in_sizes.xy + p.pad_dilation.xy);
  const int pool_size = (end_padded.x - start.x) * (end_padded.y - start.y);
  const ivec2 lo = max(start, ivec2(0));
  const ivec2 hi = min(end_padded, p.in_sizes.xy);
  vec4 acc = vec4(0.0);
  for (int iy = lo.y; iy < hi.y; ++iy)
    for (int ix = lo.x; ix < hi.x; ++ix) acc += vec4(imageLoad(t_in, ivec3(ix, iy, pos.z)));
  const int divisor = p.divisor_override > 0 ? p.divisor_override
                      : p.count_include_pad != 0 ? pool_size : (hi.x - lo.x) * (hi.y - lo.y);
  acc /= float(max(divisor, 1));
#endif
  imageStore(t_out, pos, VEC4_T(acc));
}
