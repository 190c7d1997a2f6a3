#version 450
// out[out_offset + c . out_strides] = in[in_offset + c . in_strides] for every multi-index c of the
// region (rank <= 8, dims outermost first).
#include "vkc_common.glslh"

layout(local_size_x = LOCAL_SIZE_X, local_size_y = LOCAL_SIZE_Y, local_size_z = LOCAL_SIZE_Z) in;

#include "vkc_out_in.glslh"

layout(push_constant) uniform Params {
  ivec4 dims_lo;
  ivec4 dims_hi;
  ivec4 in_strides_lo;
  ivec4 in_strides_hi;
  ivec4 out_strides_lo;
  ivec4 out_strides_hi;
  ivec4 misc;  // rank, in_offset, out_offset, element count
} p;

int at(ivec4 lo, ivec4 hi, int d) { return d < 4 ? lo[d] : hi[d - 4]; }

void main() {
  const int i = global_index();
  if (i >= p.misc.w) return;
  int rest = i, src = p.misc.y, dst = p.misc.z;
  for (int d = p.misc.x - 1; d >= 0; --d) {
    const int size = at(p.dims_lo, p.dims_hi, d);
    const int c = rest % size;
    rest /= size;
    src += c * at(p.in_strides_lo, p.in_strides_hi, d);
    dst += c * at(p.out_strides_lo, p.out_strides_hi, d);
  }
  t_out[dst] = t_in[src];
}
