#version 450
// Tiled linear (linear_tiled.yaml): TILE_ROWS (4 or 1) rows x 4 outputs per invocation, weights
// prepacked as vec4s over 4 outputs ([N / 4][K]).
#include "vkc_common.glslh"

layout(local_size_x = LOCAL_SIZE_X, local_size_y = LOCAL_SIZE_Y, local_size_z = LOCAL_SIZE_Z) in;

#include "vkc_out_in.glslh"
#include "vkc_packed_weights.glslh"

layout(push_constant) uniform Params {
  ivec4 out_sizes;  // WHCN: x = N
  int k;
  int weight_kn;    // not read: the packing took care of it
  int has_bias;
  float alpha;
  float beta;
} p;

#if defined(STORAGE_buffer)
// Elements 4*k4 .. 4*k4+3 of input row `row`, all within K.
vec4 in4_full(int row, int k4) {
  const int base = row * p.k + 4 * k4;
  return vec4(float(t_in[base]), float(t_in[base + 1]), float(t_in[base + 2]), float(t_in[base + 3]));
}
// Elements 4*k4 .. 4*k4+3 of input row `row` (zeros past K).
vec4 in4(int row, int k4) {
  const int base = row * p.k + 4 * k4;
  if (4 * k4 + 3 < p.k) return vec4(float(t_in[base]), float(t_in[base + 1]), float(t_in[base + 2]), float(t_in[base + 3]));
  vec4 r = vec4(0.0);
  for (int j = 0; j < 4; ++j)
    if (4 * k4 + j < p.k) r[j] = float(t_in[base + j]);
  return r;
}
#endif

void main() {
  const int idx = global_index();
  const int n4s = div_up4(p.out_sizes.x);
  const int n4 = idx % n4s;
#if defined(STORAGE_buffer)
  const int rows = p.out_sizes.y * p.out_sizes.z * p.out_sizes.w;
  const int row0 = (idx / n4s) * TILE_ROWS;
  if (row0 >= rows) return;
  const int nrows = min(TILE_ROWS, rows - row0);
#else
  const int ytiles = (p.out_sizes.y + TILE_ROWS - 1) / TILE_ROWS;
  const int y0 = ((idx / n4s) % ytiles) * TILE_ROWS, z = idx / (n4s * ytiles);
  if (z >= p.out_sizes.z * p.out_sizes.w) return;
  const int nrows = min(TILE_ROWS, p.out_sizes.y - y0);
#endif
  vec4 acc0 = vec4(0.0), acc1 = vec4(0.0), acc2 = vec4(0.0), acc3 = vec4(0.0);
  const int k4s = div_up4(p.k);
  const int full = p.k / 4;  // blocks of 4 that K fills: no lane checks inside the main loop
  int widx = n4 * p.k;
  for (int k4 = 0; k4 < full; ++k4, widx += 4) {
    const vec4 w0 = vec4(t_weight[widx]), w1 = vec4(t_weight[widx + 1]);
    const vec4 w2 = vec4(t_weight[widx + 2]), w3 = vec4(t_weight[widx + 3]);
#if defined(STORAGE_buffer)
    const vec4 x0 = in4_full(row0, k4);
    const vec4 x1 = TILE_ROWS > 1 && nrows > 1 ? in4_full(row0 + 1, k4) : vec4(0.0);
    const vec4 x2 = TILE_ROWS > 1 && nrows > 2 ? in4_full(row0 + 2, k4) : vec4(0.0);
    const vec4 x3 = TILE_ROWS > 1 && nrows > 3 ? in4_full(row0 + 3, k4) : vec4(0.0);
#else
    const vec4 x0 = vec4(imageLoad(t_in, ivec3(k4, y0, z)));
    const vec4 x1 = TILE_ROWS > 1 && nrows > 1 ? vec4(imageLoad(t_in, ivec3(k4, y0 + 1, z))) : vec4(0.0);
    const vec4 x2 = TILE_ROWS > 1 && nrows > 2 ? vec4(imageLoad(t_in, ivec3(k4, y0 + 2, z))) : vec4(0.0);
    const vec4 x3 = TILE_ROWS > 1 && nrows > 3 ? vec4(imageLoad(t_in, ivec3(k4, y0 + 3, z))) : vec4(0.0);
#endif
    acc0 += w0 * x0.x + w1 * x0.y + w2 * x0.z + w3 * x0.w;
    if (TILE_ROWS > 1) {
      acc1 += w0 * x1.x + w1 * x1.y + w2 * x1.z + w3 * x1.w;
      acc2 += w0 * x2.x + w1 * x2.y + w2 * x2.z + w3 * x2.w;
      acc3 += w0 * x3.x + w1 * x3.y + w2 * x3.z + w3 * x3.w;
    }
  }
  if (full < k4s) {  // the last, partial block of K
    const int k4 = full;
    // Lanes past K: the weights there are zero, but a texture's padding lanes may hold anything.
    const int tail = p.k - k4 * 4;
    const vec4 w0 = vec4(t_weight[widx]);
    const vec4 w1 = tail > 1 ? vec4(t_weight[widx + 1]) : vec4(0.0);
    const vec4 w2 = tail > 2 ? vec4(t_weight[widx + 2]) : vec4(0.0);
    const vec4 w3 = vec4(0.0);
#if defined(STORAGE_buffer)
    const vec4 x0 = in4(row0, k4);
    const vec4 x1 = nrows > 1 ? in4(row0 + 1, k4) : vec4(0.0);
    const vec4 x2 = nrows > 2 ? in4(row0 + 2, k4) : vec4(0.0);
    const vec4 x3 = nrows > 3 ? in4(row0 + 3, k4) : vec4(0.0);
#else
    const bvec4 keep = bvec4(true, tail > 1, tail > 2, false);
    const vec4 x0 = mix(vec4(0.0), vec4(imageLoad(t_in, ivec3(k4, y0, z))), keep);
    const vec4 x1 = nrows > 1 ? mix(vec4(0.0), vec4(imageLoad(t_in, ivec3(k4, y0 + 1, z))), keep) : vec4(0.0);
    const vec4 x2 = nrows > 2 ? mix(vec4(0.0), vec4(imageLoad(t_in, ivec3(k4, y0 + 2, z))), keep) : vec4(0.0);
    const vec4 x3 = nrows > 3 ? mix(vec4(0.0), vec4(imageLoad(t_in, ivec3(k4, y0 + 3, z))), keep) : vec4(0.0);
#endif
    acc0 += w0 * x0.x + w1 * x0.y + w2 * x0.z + w3 * x0.w;
    acc1 += w0 * x1.x + w1 * x1.y + w2 * x1.z + w3 * x1.w;
    acc2 += w0 * x2.x + w1 * x2.y + w2 * x2.z + w3 * x2.w;
    acc3 += w0 * x3.x + w1 * x3.y + w2 * x3.z + w3 * x3.w;
  }
  const int n0 = n4 * 4;
  const vec4 bias = p.has_bias != 0 ? p.beta * bias4(n0, p.out_sizes.x) : vec4(0.0);
  vec4 r[4] = vec4[4](p.alpha * acc0 + bias, p.alpha * acc1 + bias, p.alpha * acc2 + bias, p.alpha * acc3 + bias);
  for (int i = 0; i < 4; ++i) {
    if (i >= nrows) break;
#if defined(STORAGE_buffer)
    const int base = (row0 + i) * p.out_sizes.x + n0;
    for (int l = 0; l < 4; ++l)
      if (n0 + l < p.out_sizes.x) t_out[base + l] = T(r[i][l]);
#else
    imageStore(t_out, ivec3(n4, y0 + i, z), VEC4_T(r[i]));
#endif
  }
}
