#version 450
// Static-int8 linear on packed int8 words (see q8ta_linear.yaml).
#if defined(DOT_khr)
#extension GL_EXT_spirv_intrinsics : require
#endif
#include "vkc_common.glslh"

layout(local_size_x = LOCAL_SIZE_X, local_size_y = LOCAL_SIZE_Y, local_size_z = LOCAL_SIZE_Z) in;

#include "vkc_q8ta_weighted.glslh"

layout(push_constant) uniform Params {
  ivec4 out_sizes;
  int k;
  int w_stride;
  int relu;
  int has_bias;
  int in_zp;
  int out_zp;
  float in_scale;
  float out_scale;
} p;

#include "vkc_q8ta.glslh"

// The 4 accumulators of output word i over the K words first, first + step, ...
ivec4 accumulate(int i, int first, int step) {
  const int n4 = q8_blocks(p.out_sizes.x), k4 = p.k >> 2;
  const int row = i / n4, n0 = (i % n4) * 4;
  ivec4 acc = ivec4(0);
  for (int j = 0; j < 4 && n0 + j < p.out_sizes.x; ++j) {
    const int w0 = (n0 + j) * (p.w_stride >> 2);
    for (int k = first; k < k4; k += step) acc[j] += q8_dot(t_in[row * k4 + k], t_weight[w0 + k]);
  }
  return acc;
}

void store(int i, ivec4 acc) {
  const int n0 = (i % q8_blocks(p.out_sizes.x)) * 4;
  ivec4 q = ivec4(0);
  for (int j = 0; j < 4 && n0 + j < p.out_sizes.x; ++j) {
    const int n = n0 + j;
    q[j] = q8ta_channel_output(acc[j] - p.in_zp * t_sums[n], n);
  }
  t_out[i] = q8_pack(q);
}

#if defined(SPLIT_k)
// A workgroup per output word; its invocations split K and shared memory adds the parts.
shared ivec4 s_acc[LOCAL_SIZE_X];

void main() {
  const int i = global_index() / LOCAL_SIZE_X, t = int(gl_LocalInvocationID.x);
  const bool live = i < q8_words(p.out_sizes, 0);
  s_acc[t] = live ? accumulate(i, t, LOCAL_SIZE_X) : ivec4(0);
  barrier();
  for (int half_size = LOCAL_SIZE_X / 2; half_size > 0; half_size /= 2) {
    if (t < half_size) s_acc[t] += s_acc[t + half_size];
    barrier();
  }
  if (live && t == 0) store(i, s_acc[0]);
}
#else
void main() {
  const int i = global_index();
  if (i >= q8_words(p.out_sizes, 0)) return;
  store(i, accumulate(i, 0, 1));
}
#endif
