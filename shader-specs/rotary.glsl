#version 450
// Rotary embedding of x [.., S, H, D] with cos/sin [rows, cols], table row = start_pos + s, plus
// element pos_index of the int32 buffer t_pos where pos_index >= 0 (a SymInt start_pos set at run
// time: the tables hold every position, read at input_pos):
//   HALVES 1: for i < cols/2 (h = cols/2), out[i] = x[i] cos[i] - x[i+h] sin[i] and
//             out[i+h] = x[i+h] cos[i] + x[i] sin[i]; out[j] = x[j] for j >= cols (partial rotation).
//   HALVES 0: for the pair (2i, 2i+1), out[2i] = x[2i] cos[i] - x[2i+1] sin[i] and
//             out[2i+1] = x[2i+1] cos[i] + x[2i] sin[i] (cols = D/2).
// Textures are width-packed (the registry's representation for the rotary ops).
#include "vkc_common.glslh"

layout(local_size_x = LOCAL_SIZE_X, local_size_y = LOCAL_SIZE_Y, local_size_z = LOCAL_SIZE_Z) in;

#include "vkc_out_in.glslh"
#if defined(STORAGE_buffer)
layout(set = 0, binding = 2, std430) restrict readonly buffer CosBuf { T t_cos[]; };
layout(set = 0, binding = 3, std430) restrict readonly buffer SinBuf { T t_sin[]; };
#define X_AT(w) float(t_in[whcn_to_index(w, p.sizes)])
#define TABLE_AT(t, col, row) float(t[(row) * p.table_sizes.x + (col)])
#else
layout(set = 0, binding = 2, IMAGE_FORMAT) uniform restrict readonly IMAGE_T t_cos;
layout(set = 0, binding = 3, IMAGE_FORMAT) uniform restrict readonly IMAGE_T t_sin;
float texel_lane(vec4 texel, int lane) { return texel[lane]; }
#define X_AT(w) texel_lane(vec4(imageLoad(t_in, whcn_to_texel(w, p.sizes, 0).xyz)), (w).x & 3)
#define TABLE_AT(t, col, row) \
  texel_lane(vec4(imageLoad(t, whcn_to_texel(ivec4(col, row, 0, 0), p.table_sizes, 0).xyz)), (col) & 3)
#endif

layout(set = 0, binding = 4, std430) restrict readonly buffer PosBuf { int t_pos[]; };

layout(push_constant) uniform Params {
  ivec4 sizes;
  ivec4 table_sizes;
  int start_pos;
  int pos_index;
} p;

float rotated(ivec4 w) {
  const int d = w.x;
  const int row = w.z + p.start_pos + (p.pos_index >= 0 ? t_pos[p.pos_index] : 0);
  ivec4 partner = w;
#if HALVES
  const int half_cols = p.table_sizes.x / 2;
  if (d >= 2 * half_cols) return X_AT(w);
  const bool first = d < half_cols;
  const int col = first ? d : d - half_cols;
  partner.x = first ? d + half_cols : d - half_cols;
#else
  const bool first = (d & 1) == 0;
  const int col = d >> 1;
  partner.x = d ^ 1;
#endif
  const float c = TABLE_AT(t_cos, col, row);
  const float s = TABLE_AT(t_sin, col, row);
  return first ? X_AT(w) * c - X_AT(partner) * s : X_AT(w) * c + X_AT(partner) * s;
}

void main() {
  const int i = global_index();
#if defined(STORAGE_buffer)
  if (i >= numel(p.sizes)) return;
  t_out[i] = T(rotated(index_to_whcn(i, p.sizes)));
#else
  const ivec3 extents = texture_extents(p.sizes, 0);
  if (i >= extents.x * extents.y * extents.z) return;
  const ivec3 pos = index_to_pos(i, extents);
  const ivec4 base = texel_to_whcn(pos, p.sizes, 0);
  vec4 y = vec4(0.0);
  for (int l = 0; l < 4 && base.x + l < p.sizes.x; ++l) y[l] = rotated(base + ivec4(l, 0, 0, 0));
  imageStore(t_out, pos, VEC4_T(y));
#endif
}
