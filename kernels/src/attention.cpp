#include "vkc/kernels/attention.h"

#include <fmt/format.h>

#include <cmath>
#include <vector>

#include "broadcast.h"

namespace vkc::kernels {

HostTensor rms_norm(const HostTensor& x, const HostTensor& w, double eps) {
  if (x.shape.empty()) throw KernelError("rms_norm of a scalar");
  const int64_t d = x.shape.back();
  if (w.numel() != d) throw KernelError(fmt::format("rms_norm weight has {} elements, expected {}", w.numel(), d));
  HostTensor out = HostTensor::zeros(x.dtype, x.shape);
  for (int64_t row = 0; row < x.numel() / std::max<int64_t>(d, 1); ++row) {
    double sq = 0;
    for (int64_t i = 0; i < d; ++i) sq += x.get_f(row * d + i) * x.get_f(row * d + i);
    const double inv = 1.0 / std::sqrt(sq / static_cast<double>(d) + eps);
    for (int64_t i = 0; i < d; ++i) out.set_f(row * d + i, x.get_f(row * d + i) * inv * w.get_f(i));
  }
  return out;
}

HostTensor sdpa(const HostTensor& q, const HostTensor& k, const HostTensor& v, const HostTensor* mask, double scale) {
  const size_t r = q.shape.size();
  if (r < 2 || k.shape.size() != r || v.shape.size() != r) throw KernelError("sdpa needs q, k, v of one rank >= 2");
  const int64_t s = q.shape[r - 2], dq = q.shape[r - 1], l = k.shape[r - 2], dv = v.shape[r - 1];
  if (k.shape[r - 1] != dq || v.shape[r - 2] != l) throw KernelError("sdpa: q, k, v sizes do not agree");
  int64_t batch = 1;
  for (size_t i = 0; i + 2 < r; ++i) {
    if (k.shape[i] != q.shape[i] || v.shape[i] != q.shape[i]) throw KernelError("sdpa: batch dims differ");
    batch *= q.shape[i];
  }
  std::vector<int64_t> score_shape(q.shape.begin(), q.shape.end() - 2);
  score_shape.insert(score_shape.end(), {s, l});
  // The mask's flat index for each score element.
  std::vector<int64_t> mask_index;
  if (mask) {
    mask_index.resize(batch * s * l);
    for_each_broadcast(broadcast_shapes(score_shape, mask->shape), {&mask->shape},
                       [&](int64_t o, const int64_t* in) { mask_index[o] = in[0]; });
  }
  std::vector<int64_t> out_shape(q.shape.begin(), q.shape.end() - 1);
  out_shape.push_back(dv);
  HostTensor out = HostTensor::zeros(q.dtype, out_shape);
  std::vector<double> row(l);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t i = 0; i < s; ++i) {
      double mx = -INFINITY;
      for (int64_t j = 0; j < l; ++j) {
        double dot = 0;
        for (int64_t c = 0; c < dq; ++c) dot += q.get_f((b * s + i) * dq + c) * k.get_f((b * l + j) * dq + c);
        row[j] = dot * scale + (mask ? mask->get_f(mask_index[(b * s + i) * l + j]) : 0.0);
        mx = std::max(mx, row[j]);
      }
      double sum = 0;
      for (double& e : row) sum += (e = std::exp(e - mx));
      for (int64_t c = 0; c < dv; ++c) {
        double acc = 0;
        for (int64_t j = 0; j < l; ++j) acc += row[j] / sum * v.get_f((b * l + j) * dv + c);
        out.set_f((b * s + i) * dv + c, acc);
      }
    }
  return out;
}

HostTensor sdpa_with_kv_cache(const HostTensor& q, const HostTensor& k, const HostTensor& v, HostTensor& k_cache,
                              HostTensor& v_cache, int64_t start) {
  if (q.shape.size() != 4 || k.shape.size() != 4 || v.shape != k.shape || k_cache.shape.size() != 4 ||
      v_cache.shape != k_cache.shape)
    throw KernelError("sdpa_with_kv_cache: q, k, v and the caches must be rank 4");
  const int64_t s = q.shape[1], hq = q.shape[2], d = q.shape[3], hkv = k.shape[2], c = k_cache.shape[1];
  if (q.shape[0] != 1 || k.shape[0] != 1 || k.shape[1] != s || k.shape[3] != d || k_cache.shape[2] != hkv ||
      k_cache.shape[3] != d || hkv == 0 || hq % hkv != 0)
    throw KernelError("sdpa_with_kv_cache: q [1,S,Hq,D], k/v [1,S,Hkv,D] and caches [1,C,Hkv,D] do not agree");
  if (start < 0 || start + s > c)
    throw KernelError("sdpa_with_kv_cache: positions " + std::to_string(start) + ".." + std::to_string(start + s - 1) +
                      " do not fit a cache of " + std::to_string(c));
  const int64_t row = hkv * d;
  for (int64_t i = 0; i < s * row; ++i) {
    k_cache.set_f(start * row + i, k.get_f(i));
    v_cache.set_f(start * row + i, v.get_f(i));
  }
  HostTensor out = HostTensor::zeros(q.dtype, q.shape);
  const double scale = 1.0 / std::sqrt(static_cast<double>(d));
  const int64_t group = hq / hkv;
  std::vector<double> w(static_cast<size_t>(start + s));
  for (int64_t i = 0; i < s; ++i)
    for (int64_t h = 0; h < hq; ++h) {
      const int64_t kv = h / group, len = start + i + 1;
      double mx = -INFINITY;
      for (int64_t j = 0; j < len; ++j) {
        double dot = 0;
        for (int64_t e = 0; e < d; ++e) dot += q.get_f((i * hq + h) * d + e) * k_cache.get_f(j * row + kv * d + e);
        w[j] = dot * scale;
        mx = std::max(mx, w[j]);
      }
      double sum = 0;
      for (int64_t j = 0; j < len; ++j) sum += (w[j] = std::exp(w[j] - mx));
      for (int64_t e = 0; e < d; ++e) {
        double acc = 0;
        for (int64_t j = 0; j < len; ++j) acc += w[j] * v_cache.get_f(j * row + kv * d + e);
        out.set_f((i * hq + h) * d + e, acc / sum);
      }
    }
  return out;
}

namespace {

// x's [S, H, D] view (leading dims fold into rows of S * H), checked against cos/sin [rows >= S, cols].
struct RotaryShape {
  int64_t outer, seq, heads, dim, cols;
};

RotaryShape rotary_shape(const HostTensor& x, const HostTensor& cos, const HostTensor& sin, int64_t min_rows,
                         const char* op) {
  const size_t r = x.shape.size();
  if (r < 3) throw KernelError(fmt::format("{}: x needs rank >= 3 ([.., S, H, D]), got rank {}", op, r));
  if (cos.shape != sin.shape || cos.shape.size() != 2)
    throw KernelError(fmt::format("{}: cos and sin must both be [rows, cols]", op));
  RotaryShape s{1, x.shape[r - 3], x.shape[r - 2], x.shape[r - 1], cos.shape[1]};
  for (size_t i = 0; i + 3 < r; ++i) s.outer *= x.shape[i];
  if (cos.shape[0] < min_rows)
    throw KernelError(fmt::format("{}: the cos/sin table has {} rows, {} needed", op, cos.shape[0], min_rows));
  return s;
}

int64_t seq_len(const HostTensor& x) { return x.shape.size() >= 3 ? x.shape[x.shape.size() - 3] : 0; }

}  // namespace

HostTensor rotary_emb_interleaved(const HostTensor& x, const HostTensor& cos, const HostTensor& sin) {
  const RotaryShape s = rotary_shape(x, cos, sin, seq_len(x), "apply_rotary_emb");
  if (s.dim % 2 != 0 || s.cols * 2 != s.dim)
    throw KernelError(fmt::format("apply_rotary_emb: head dim {} needs cos/sin of {} columns, got {}", s.dim,
                                  s.dim / 2, s.cols));
  HostTensor out = HostTensor::zeros(x.dtype, x.shape);
  for (int64_t o = 0; o < s.outer; ++o)
    for (int64_t t = 0; t < s.seq; ++t)
      for (int64_t h = 0; h < s.heads; ++h) {
        const int64_t base = ((o * s.seq + t) * s.heads + h) * s.dim;
        for (int64_t i = 0; i < s.cols; ++i) {
          const double re = x.get_f(base + 2 * i), im = x.get_f(base + 2 * i + 1);
          const double c = cos.get_f(t * s.cols + i), sn = sin.get_f(t * s.cols + i);
          out.set_f(base + 2 * i, re * c - im * sn);
          out.set_f(base + 2 * i + 1, re * sn + im * c);
        }
      }
  return out;
}

HostTensor rotary_emb_half(const HostTensor& x, const HostTensor& cos, const HostTensor& sin, int64_t start_pos) {
  if (start_pos < 0) throw KernelError("apply_rotary_emb_hf: start_pos is negative");
  const RotaryShape s = rotary_shape(x, cos, sin, start_pos + seq_len(x), "apply_rotary_emb_hf");
  if (s.cols % 2 != 0 || s.cols > s.dim)
    throw KernelError(fmt::format("apply_rotary_emb_hf: rotary dim {} must be even and at most the head dim {}",
                                  s.cols, s.dim));
  const int64_t half = s.cols / 2;
  HostTensor out = HostTensor::zeros(x.dtype, x.shape);
  for (int64_t o = 0; o < s.outer; ++o)
    for (int64_t t = 0; t < s.seq; ++t)
      for (int64_t h = 0; h < s.heads; ++h) {
        const int64_t base = ((o * s.seq + t) * s.heads + h) * s.dim, row = (start_pos + t) * s.cols;
        for (int64_t i = 0; i < half; ++i) {
          const double a = x.get_f(base + i), b = x.get_f(base + i + half);
          const double c = cos.get_f(row + i), sn = sin.get_f(row + i);
          out.set_f(base + i, a * c - b * sn);
          out.set_f(base + i + half, b * c + a * sn);
        }
        for (int64_t j = s.cols; j < s.dim; ++j) out.set_f(base + j, x.get_f(base + j));
      }
  return out;
}

}  // namespace vkc::kernels
