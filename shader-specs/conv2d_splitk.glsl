#version 450
// Split-K 2-D convolution on channels-packed textures (conv2d_splitk.yaml): a workgroup per
// output texel sums strided slices of the taps, then adds them in shared memory.
#include "vkc_common.glslh"

layout(local_size_x = LOCAL_SIZE_X, local_size_y = LOCAL_SIZE_Y, local_size_z = LOCAL_SIZE_Z) in;

#include "vkc_out_in.glslh"
#include "vkc_packed_weights.glslh"
#include "vkc_conv_params.glslh"

shared vec4 partial[LOCAL_SIZE_X];

void main() {
  const int group = global_index() / LOCAL_SIZE_X;
  const int t = int(gl_LocalInvocationID.x);
  const int oc4n = div_up4(p.out_sizes.z);
  const bool live = group < p.out_sizes.x * p.out_sizes.y * oc4n * p.out_sizes.w;
  const int ox = group % p.out_sizes.x;
  int rest = group / p.out_sizes.x;
  const int oy = rest % p.out_sizes.y;
  rest /= p.out_sizes.y;
  const int oc4 = rest % oc4n;
  const int n = rest / oc4n;

  const int kw = p.kernel_stride.x, kh = p.kernel_stride.y;
  const int cin_g = p.in_sizes.z / p.groups, cout_g = p.out_sizes.z / p.groups;
  const int ic4n = div_up4(cin_g), khw = kh * kw;
  const int g = (oc4 * 4) / cout_g;
  const int z0 = n * div_up4(p.in_sizes.z) + (g * cin_g) / 4;
  const int tail = cin_g - (ic4n - 1) * 4;
  const bvec4 tail_keep = bvec4(tail > 0, tail > 1, tail > 2, tail > 3);
  const int ix0 = ox * p.kernel_stride.z - p.pad_dilation.x, iy0 = oy * p.kernel_stride.w - p.pad_dilation.y;

  vec4 acc = vec4(0.0);
  if (live) {
    for (int tap = t; tap < ic4n * khw; tap += LOCAL_SIZE_X) {
      const int ic4 = tap / khw, k = tap - ic4 * khw;
      const int ky = k / kw, kx = k - ky * kw;
      const int iy = iy0 + ky * p.pad_dilation.w, ix = ix0 + kx * p.pad_dilation.z;
      if (iy < 0 || iy >= p.in_sizes.y || ix < 0 || ix >= p.in_sizes.x) continue;
      const vec4 x = mix(vec4(0.0), vec4(imageLoad(t_in, ivec3(ix, iy, z0 + ic4))),
                         ic4 == ic4n - 1 ? tail_keep : bvec4(true));
      const int widx = ((oc4 * ic4n + ic4) * khw + k) * 4;
      acc += vec4(t_weight[widx]) * x.x + vec4(t_weight[widx + 1]) * x.y + vec4(t_weight[widx + 2]) * x.z +
             vec4(t_weight[widx + 3]) * x.w;
    }
  }
  partial[t] = acc;
  barrier();
  for (int s = LOCAL_SIZE_X / 2; s > 0; s >>= 1) {
    if (t < s) partial[t] += partial[t + s];
    barrier();
  }
  if (t == 0 && live) {
    const vec4 r = partial[0] + (p.has_bias != 0 ? bias4(oc4 * 4, p.out_sizes.z) : vec4(0.0));
    imageStore(t_out, ivec3(ox, oy, n * oc4n + oc4), VEC4_T(clamp(r, vec4(p.out_min), vec4(p.out_max))));
  }
}
