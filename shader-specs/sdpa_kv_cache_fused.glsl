#version 450
#if defined(WG_SUBGROUP) && WG_SUBGROUP
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#endif
// sdpa_with_kv_cache in one dispatch (sdpa_kv_cache_fused.yaml): the new key and value rows into the
// caches and the workgroup-per-row attention over them (vkc_sdpa_kv_cache_wg.glslh, FUSED_UPDATE);
// with SPLIT, several workgroups per row over parts of its keys (the last to finish adds them up).
#include "vkc_common.glslh"

layout(local_size_x = LOCAL_SIZE_X, local_size_y = LOCAL_SIZE_Y, local_size_z = LOCAL_SIZE_Z) in;

#define FUSED_UPDATE 1
#include "vkc_sdpa_kv_cache_io.glslh"

#if ROPE
#if defined(STORAGE_buffer)
layout(set = 0, binding = 7, std430) restrict VKC_IN_COHERENT readonly buffer CosBuf { T t_cos[]; };
layout(set = 0, binding = 8, std430) restrict VKC_IN_COHERENT readonly buffer SinBuf { T t_sin[]; };
#define ROPE_AT(t, col, row) float(t[(row) * p.table_sizes.x + (col)])
#define ROPE_TABLE4(t, col4, row) \
  vec4(ROPE_AT(t, 4 * (col4), row), ROPE_AT(t, 4 * (col4) + 1, row), ROPE_AT(t, 4 * (col4) + 2, row), ROPE_AT(t, 4 * (col4) + 3, row))
#else
layout(set = 0, binding = 7, IMAGE_FORMAT) uniform restrict VKC_IN_COHERENT readonly IMAGE_T t_cos;
layout(set = 0, binding = 8, IMAGE_FORMAT) uniform restrict VKC_IN_COHERENT readonly IMAGE_T t_sin;
#define ROPE_TABLE4(t, col4, row) vec4(imageLoad(t, ivec3(col4, row, 0)))
#endif
#endif

#if DECODE
// One query row (vkc_attention_decode.glslh; DECODE 2: by kv head, vkc_attention_gqa.glslh): its
// parts meet as the _split variants' do.
#define WG_DECODE DECODE
#if !SPLIT
#error "DECODE needs SPLIT's bindings"
#endif
#endif
#if SPLIT
// Flash-decoding (vkc_attention_wg.glslh's WG_SPLIT): per workgroup (row, part) its max and sum
// (texel 0) and unnormalized P.V (texels 1 .. dv4); the last part of a row to finish (a counter
// per row, left at 0 for the next run) rescales and adds them up and writes the output.
#if !DECODE
#define WG_SPLIT 1
#endif
#if ROPE
layout(set = 0, binding = 9, std430) restrict coherent buffer PartialBuf { vec4 t_partial[]; };
layout(set = 0, binding = 10, std430) restrict coherent buffer CountBuf { int t_count[]; };
#else
layout(set = 0, binding = 7, std430) restrict coherent buffer PartialBuf { vec4 t_partial[]; };
layout(set = 0, binding = 8, std430) restrict coherent buffer CountBuf { int t_count[]; };
#endif
int wg_splits() { return p.splits; }
// A row of L keys in parts of at least split_keys keys, at most row_parts of them.
int wg_split_keys(int keys) { return max(p.split_keys, (keys + p.row_parts - 1) / p.row_parts); }
void wg_store(int x4, ivec3 r, vec4 value);
void wg_store_partial(int x4, int wg, vec4 acc, float m, float sum) {
  const int base = wg * (div_up4(p.out_sizes.x) + 1);
  if (x4 == 0) t_partial[base] = vec4(m, sum, 0.0, 0.0);
  t_partial[base + 1 + x4] = acc;
}
shared bool split_last;
void wg_split_done(int row, ivec3 r, int parts) {
  const int t = int(gl_LocalInvocationID.x);
  memoryBarrierBuffer();  // this part's results, visible before the count says they are there
  barrier();
  if (t == 0) split_last = atomicAdd(t_count[row], 1) == parts - 1;
  barrier();
  if (!split_last) return;
  memoryBarrierBuffer();
  const int dv4 = div_up4(p.out_sizes.x), stride = dv4 + 1, first = row * p.splits;
  if (t < dv4) {
    float m = -1.0 / 0.0;
    for (int g = 0; g < parts; ++g) m = max(m, t_partial[(first + g) * stride].x);
    float sum = 0.0;
    vec4 acc = vec4(0.0);
    for (int g = 0; g < parts; ++g) {
      const vec4 head = t_partial[(first + g) * stride];
      const float w = exp(head.x - m);
      sum += head.y * w;
      acc += t_partial[(first + g) * stride + 1 + t] * w;
    }
    wg_store(t, r, acc / sum);
  }
  if (t == 0) t_count[row] = 0;
}
#endif

// (main() of the include below runs between the chained dispatches' wait and count, vkc_chain.glslh)
#include "vkc_chain.glslh"
#define main attention_main
#include "vkc_sdpa_kv_cache_wg.glslh"
#undef main
void main() {
  chain_wait();
  attention_main();
  chain_done();
}
