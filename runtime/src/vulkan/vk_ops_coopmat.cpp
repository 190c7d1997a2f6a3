// fp16 linear / addmm on cooperative matrices (matmul_coopmat.glsl's linear_coopmat variants),
// where the device has VK_KHR/NV_cooperative_matrix: weights packed at load as [N, K] fp16, the
// bias as 16 rows of f32 the accumulators start from; texture operands go through buffer
// scratch tensors (copy.glsl).
#include <fmt/format.h>

#include <cstring>
#include <string>

#include "vk_encoder.h"

namespace vkc::runtime::vk {
namespace {

// Rows below this stay on the other kernels (decoding a token is a vector times a matrix).
constexpr int64_t kMinRows = 64;
// Workgroups a tile size must make to be chosen over the next smaller one.
constexpr int64_t kMinTiles = 120;

// A variant's integer parameter (TILE_M, TILE_N).
int64_t variant_param(const codegen::LibraryVariant& v, const std::string& name) {
  for (const std::string& p : v.params)
    if (p.rfind(name + "=", 0) == 0) return std::stoll(p.substr(name.size() + 1));
  return 0;
}

// The weight as [N, K] fp16: as it is (linear) or transposed from [K, N] (addmm).
std::vector<uint8_t> pack_nk(const kernels::HostTensor& w) { return {w.data.data(), w.data.data() + w.data.size()}; }
std::vector<uint8_t> pack_kn(const kernels::HostTensor& w) {
  const int64_t k = w.shape[0], n = w.shape[1];
  std::vector<uint8_t> out(w.data.size());
  for (int64_t i = 0; i < k; ++i)
    for (int64_t j = 0; j < n; ++j) std::memcpy(out.data() + (j * k + i) * 2, w.data.data() + (i * n + j) * 2, 2);
  return out;
}
// The f32 bias [N] as 16 equal rows, each padded to N rounded up to 16.
std::vector<uint8_t> pack_bias16(const kernels::HostTensor& b) {
  const int64_t n = b.shape.empty() ? 1 : b.shape.back(), n_pad = (n + 15) / 16 * 16;
  std::vector<uint8_t> out(static_cast<size_t>(16 * n_pad) * 4, 0);
  for (int64_t r = 0; r < 16; ++r) std::memcpy(out.data() + r * n_pad * 4, b.data.data(), static_cast<size_t>(n) * 4);
  return out;
}

}  // namespace

bool encode_linear_coopmat(Encoder& e) {
  if (!e.cooperative_matrix() || e.cpu_device()) return false;
  const bool addmm = e.op() == "aten.addmm.default";
  const size_t in_arg = addmm ? 1 : 0, w_arg = addmm ? 2 : 1, b_arg = addmm ? 0 : 2;
  GpuTensor& out = e.out();
  if (out.dtype != ir::DType::Float16 || out.int8x4 || !e.is_constant(w_arg)) return false;
  const auto& wdims = e.vk_tensor(e.id(w_arg)).dims;
  const int64_t n = out.dims.back();
  if (wdims.size() != 2) return false;
  const int64_t k = wdims[addmm ? 0 : 1];
  if (wdims[addmm ? 1 : 0] != n || k % 8 != 0 || n % 2 != 0) return false;
  int64_t m = 1;
  for (size_t d = 0; d + 1 < out.dims.size(); ++d) m *= out.dims[d];
  if (m < kMinRows) return false;
  if (addmm && (e.scalar_arg(3) != 1.0 || e.scalar_arg(4) != 1.0)) return false;
  const bool has_bias = !e.is_null(b_arg);
  if (has_bias) {
    if (!e.is_constant(b_arg)) return false;
    const auto& bdims = e.vk_tensor(e.id(b_arg)).dims;
    int64_t bn = 1;
    for (auto d : bdims) bn *= d;
    if (bn != n || bdims.empty() || bdims.back() != n) return false;
  }
  GpuTensor& in = e.tensor(in_arg);
  if (in.dtype != ir::DType::Float16 || in.int8x4 || in.dims.back() != k) return false;

  GpuTensor like;  // a contiguous fp16 buffer
  like.dtype = ir::DType::Float16;
  // The largest tile that still makes about a workgroup per multiprocessor of a big GPU (the
  // larger tiles run at 230-240 TFLOP/s on an H200, the 64x64 one at 90), else the smallest.
  const codegen::LibraryVariant* v = nullptr;
  for (const char* name : {"linear_coopmat", "linear_coopmat_mid", "linear_coopmat_small", "linear_coopmat_tiny"}) {
    v = &e.variant(like, {}, name, "aten.linear.default");
    const int64_t tm = variant_param(*v, "TILE_M"), tn = variant_param(*v, "TILE_N");
    if (tm <= 0 || tn <= 0) e.fail(fmt::format("{} lacks its TILE_M/TILE_N parameters", v->name));
    if (((m + tm - 1) / tm) * ((n + tn - 1) / tn) >= kMinTiles) break;
  }
  const int64_t tm = variant_param(*v, "TILE_M"), tn = variant_param(*v, "TILE_N");

  const VkBuffer weight = e.packed(w_arg, ir::DType::Float16, addmm ? "coopmat_kn" : "coopmat_nk", addmm ? pack_kn : pack_nk);
  const VkBuffer bias = has_bias ? e.packed(b_arg, ir::DType::Float32, "coopmat_bias16", pack_bias16)
                                 : e.filled(16, 0, ir::DType::Float32);
  GpuTensor* a = &in;
  if (in.texture) {
    a = &e.scratch(in.dims, like);
    encode_copy(e, *a, in, {});
  }
  GpuTensor* o = out.texture ? &e.scratch(out.dims, like) : &out;
  Push p(*v);
  p.iv("mnk", {static_cast<int32_t>(m), static_cast<int32_t>(n), static_cast<int32_t>(k), has_bias ? 1 : 0});
  const int64_t tiles = ((m + tm - 1) / tm) * ((n + tn - 1) / tn);
  e.dispatch(*v, {o->resource(), a->resource(), {weight, VK_NULL_HANDLE}, {bias, VK_NULL_HANDLE}}, p,
             tiles * v->local_size[0]);
  if (out.texture) encode_copy(e, out, *o, {});
  return true;
}

}  // namespace vkc::runtime::vk
