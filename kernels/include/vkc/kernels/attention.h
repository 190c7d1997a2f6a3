// Transformer-block reference kernels: RMSNorm, scaled dot-product attention, rotary embeddings.
#pragma once

#include "vkc/kernels/host_tensor.h"

namespace vkc::kernels {

/// y = x / sqrt(mean(x^2 over the last dim) + eps) * w, w of the last dim's size.
HostTensor rms_norm(const HostTensor& x, const HostTensor& w, double eps);
/// softmax(q k^T * scale + mask) v over the last two dims of [..., S, D] / [..., L, D] / [..., L, Dv];
/// `mask` (optional) broadcasts to [..., S, L].
HostTensor sdpa(const HostTensor& q, const HostTensor& k, const HostTensor& v, const HostTensor* mask, double scale);

/// One step of attention over a KV cache (sdpa_with_kv_cache): q [1, S, Hq, D], k/v [1, S, Hkv, D] are
/// written into k_cache/v_cache [1, C, Hkv, D] (owned, zeros() tensors) at rows start..start+S-1; then
/// query s of head h attends causally to cache rows [0, start + s] of kv head h / (Hq / Hkv), scaled by
/// 1/sqrt(D). Returns [1, S, Hq, D]. Throws KernelError when start + S > C or the shapes disagree.
HostTensor sdpa_with_kv_cache(const HostTensor& q, const HostTensor& k, const HostTensor& v, HostTensor& k_cache,
                              HostTensor& v_cache, int64_t start);

/// Rotary embedding on pairs of adjacent elements (et_vk.apply_rotary_emb): x [.., S, H, D] with D even,
/// cos/sin [S, D/2]; for the pair (x[2i], x[2i+1]) at sequence position s:
///   out[2i] = x[2i] cos[s, i] - x[2i+1] sin[s, i],  out[2i+1] = x[2i] sin[s, i] + x[2i+1] cos[s, i].
HostTensor rotary_emb_interleaved(const HostTensor& x, const HostTensor& cos, const HostTensor& sin);
/// Rotary embedding on halves (et_vk.apply_rotary_emb_hf): x [.., S, H, D], cos/sin [max_S, R] with R even and
/// R <= D. Row start_pos + s is used; within it only the first R/2 columns are read (HF tables repeat them):
///   out[i] = x[i] cos[i] - x[i + R/2] sin[i],  out[i + R/2] = x[i + R/2] cos[i] + x[i] sin[i]  (i < R/2),
/// and out[j] = x[j] for j >= R (partial rotation passes the rest through).
HostTensor rotary_emb_half(const HostTensor& x, const HostTensor& cos, const HostTensor& sin, int64_t start_pos);

}  // namespace vkc::kernels
