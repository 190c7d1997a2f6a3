#version 450
// greedy_token.yaml: the greedy token of a logits row, fed back as the next decode step's input.
#include "vkc_common.glslh"

layout(local_size_x = LOCAL_SIZE_X, local_size_y = 1, local_size_z = 1) in;

#if defined(STORAGE_buffer)
layout(set = 0, binding = 0, std430) restrict VKC_IN_COHERENT readonly buffer LogitsBuf { T t_logits[]; };
#else
layout(set = 0, binding = 0, IMAGE_FORMAT) uniform restrict VKC_IN_COHERENT readonly IMAGE_T t_logits;
#endif
// (coherent in _chain twins: the step before's greedy_token wrote them with no barrier between)
layout(set = 0, binding = 1, std430) restrict VKC_IN_COHERENT buffer StateBuf { int t_state[]; };
layout(set = 0, binding = 2, std430) restrict VKC_IN_COHERENT buffer TokenBuf { int t_token[]; };
layout(set = 0, binding = 3, std430) restrict VKC_IN_COHERENT buffer PosBuf { int t_pos[]; };

layout(push_constant) uniform Params {
  ivec4 sizes;  // WHCN of the logits: x = V, y = rows
  int row;
  int vocab;
  int capacity;
  int token_words;
  int pos_words;
#if defined(VKC_CHAIN_BINDING)
  ivec4 chain;  // chained dispatches (vkc_chain.glslh)
#endif
} p;

// (_chain twins: the pick runs between the chained dispatches' wait and count)
#include "vkc_chain.glslh"

shared float s_value[LOCAL_SIZE_X];
shared int s_index[LOCAL_SIZE_X];

// (value, index) replaced by a candidate that is larger, or as large at a lower index.
void take(inout float value, inout int index, const float v, const int i) {
  if (v > value || (v == value && i < index)) {
    value = v;
    index = i;
  }
}

void pick() {
  const int t = int(gl_LocalInvocationID.x);
  const int n = min(p.vocab, p.sizes.x);
  // Each invocation scans its logits in rising order from logit 0 (a NaN there keeps 0 for all).
#if defined(STORAGE_buffer)
  const int base = p.row * p.sizes.x;
  float best = float(t_logits[base]);
  int at = 0;
  for (int j = t; j < n; j += LOCAL_SIZE_X) {
    const float v = float(t_logits[base + j]);
    if (v > best) {
      best = v;
      at = j;
    }
  }
#else
  float best = float(imageLoad(t_logits, ivec3(0, p.row, 0)).x);
  int at = 0;
  for (int x = t; 4 * x < n; x += LOCAL_SIZE_X) {
    const vec4 v = vec4(imageLoad(t_logits, ivec3(x, p.row, 0)));
    for (int l = 0; l < 4 && 4 * x + l < n; ++l)
      if (v[l] > best) {
        best = v[l];
        at = 4 * x + l;
      }
  }
#endif
  s_value[t] = best;
  s_index[t] = at;
  barrier();
  for (int half_ = LOCAL_SIZE_X / 2; half_ > 0; half_ /= 2) {
    if (t < half_) {
      float v = s_value[t];
      int i = s_index[t];
      take(v, i, s_value[t + half_], s_index[t + half_]);
      s_value[t] = v;
      s_index[t] = i;
    }
    barrier();
  }
  if (t != 0) return;
  const int token = s_index[0];
  const int step = t_state[0];
  t_state[1 + step % p.capacity] = token;
  t_state[0] = step + 1;
  t_token[0] = token;
  if (p.token_words == 2) t_token[1] = 0;
  t_pos[0] += 1;  // (an int64 position: its low word; positions stay below 2^31)
}

void main() {
  chain_wait();
  pick();
  chain_done();
}
