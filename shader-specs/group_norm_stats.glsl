#version 450
// (mean, rstd) of group g of batch n: channels [g C/G, (g+1) C/G) x H x W (see the spec).
#include "vkc_common.glslh"

layout(local_size_x = LOCAL_SIZE_X, local_size_y = LOCAL_SIZE_Y, local_size_z = LOCAL_SIZE_Z) in;

layout(set = 0, binding = 0, std430) restrict writeonly buffer StatsBuf { float t_stats[]; };
#if defined(STORAGE_buffer)
layout(set = 0, binding = 1, std430) restrict readonly buffer InBuf { T t_in[]; };
#else
layout(set = 0, binding = 1, IMAGE_FORMAT) uniform restrict readonly IMAGE_T t_in;
#endif

layout(push_constant) uniform Params {
  ivec4 in_sizes;
  int packed_dim;
  int groups;
  float eps;
} p;

float load(ivec4 w) { return float(TENSOR_AT(t_in, w, p.in_sizes, p.packed_dim)); }

shared float partial[LOCAL_SIZE_X];

// Sum over this workgroup of each invocation's `v` (all invocations get it).
float workgroup_sum(float v, int tid) {
  partial[tid] = v;
  barrier();
  for (int stride = LOCAL_SIZE_X / 2; stride > 0; stride >>= 1) {
    if (tid < stride) partial[tid] += partial[tid + stride];
    barrier();
  }
  const float total = partial[0];
  barrier();
  return total;
}

void main() {
  const int pair = int(gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x);  // n * groups + g
  const int tid = int(gl_LocalInvocationID.x);
  const int n = pair / p.groups, g = pair % p.groups;
  const int per_group = p.in_sizes.z / p.groups;
  const ivec4 extent = ivec4(p.in_sizes.x, p.in_sizes.y, per_group, 1);
  const int count = numel(extent);
  const ivec4 base = ivec4(0, 0, g * per_group, n);
  const bool in_batch = n < p.in_sizes.w;
  float s = 0.0;
  for (int r = tid; in_batch && r < count; r += LOCAL_SIZE_X) s += load(base + index_to_whcn(r, extent));
  const float mean = workgroup_sum(s, tid) / float(count);
  float q = 0.0;
  for (int r = tid; in_batch && r < count; r += LOCAL_SIZE_X) {
    const float d = load(base + index_to_whcn(r, extent)) - mean;
    q += d * d;
  }
  const float var = workgroup_sum(q, tid) / float(count);
  if (tid == 0 && in_batch) {
    t_stats[2 * pair] = mean;
    t_stats[2 * pair + 1] = inversesqrt(var + p.eps);
  }
}
