#include "int_quant.h"

#include "vkc/ir/half.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <utility>

namespace vkc::passes::quant {
namespace {

constexpr float kEps = std::numeric_limits<float>::epsilon();  // torchao's eps for fp32 weights

// Round half to even for |x| < 2^22 without a libm call (default rounding mode), so the loops vectorize.
inline float round_even(float x) {
  constexpr float kMagic = 12582912.0f;  // 1.5 * 2^23
  return (x + kMagic) - kMagic;
}

inline int64_t pad8(int64_t n) { return (n + 7) / 8 * 8; }

// The hot quantization loops are built twice on x86-64 (AVX2 and the baseline) and the loader picks
// the one the CPU runs (GCC function multiversioning); elsewhere, once.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_ADDRESS__)
#define VKC_VECTOR_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define VKC_VECTOR_CLONES
#endif

}  // namespace

float int4_scale(float amax) { return std::max(amax / 7.5f, kEps); }

int8_t int4_quantize(float x, float scale) {
  const float inv = 1.0f / scale;
  return static_cast<int8_t>(std::clamp(round_even(x * inv), -8.0f, 7.0f));
}

const float* RowReader::range(int64_t first, int64_t count) {
  if (w_) return w_ + first;
  range_.resize(static_cast<size_t>(count));
  if (d_) {
    const size_t e = d_half_ ? 2 : 4;
    raw_.resize(static_cast<size_t>(count) * e);
    d_->read(static_cast<uint64_t>(first) * e, raw_);
    if (!d_half_) {
      std::memcpy(range_.data(), raw_.data(), raw_.size());
    } else {
      for (int64_t i = 0; i < count; ++i) {
        uint16_t h;
        std::memcpy(&h, raw_.data() + i * 2, 2);
        range_[static_cast<size_t>(i)] = ir::half_to_float(h);
      }
    }
    return range_.data();
  }
  for (int64_t i = 0; i < count; ++i) range_[static_cast<size_t>(i)] = ir::half_to_float(h_[first + i]);
  return range_.data();
}

const float* RowReader::row(int64_t n) {
  if (!transposed_) return range(n * cols_, cols_);
  if (block_start_ < 0 || n < block_start_ || n >= block_start_ + kBlock) {
    block_start_ = n - n % kBlock;
    const int64_t count = std::min(kBlock, rows_ - block_start_);
    block_.resize(static_cast<size_t>(kBlock * cols_));
    for (int64_t k = 0; k < cols_; ++k) {
      const float* src = range(k * rows_ + block_start_, count);  // count consecutive values of source row k
      for (int64_t j = 0; j < count; ++j) block_[j * cols_ + k] = src[j];
    }
  }
  return block_.data() + (n - block_start_) * cols_;
}

void RowReader::used_up_to(int64_t elements) {
  constexpr int64_t kStep = int64_t{4} << 20;  // bytes let go of at a time
  const int64_t size = w_ ? int64_t{sizeof(float)} : int64_t{sizeof(uint16_t)};
  if (!file_backed_ || (elements - released_) * size < kStep) return;
  const auto* base = w_ ? static_cast<const void*>(w_ + released_) : static_cast<const void*>(h_ + released_);
  release_pages(base, static_cast<size_t>((elements - released_) * size), true);
  released_ = elements;
}

namespace {

// A result of `rows` x `cols` with every packed nibble 8 (q = 0, the padding past K) and room for
// the scales and group sums.
Int4Grouped empty_int4_grouped(int64_t rows, int64_t cols, int64_t group, bool pack) {
  Int4Grouped r;
  r.rows = rows;
  r.cols = cols;
  r.group = group;
  const size_t bytes = static_cast<size_t>(rows * (pad8(cols) / 2));
  if (pack) {
    r.packed.reserve(bytes);
    prefer_huge_pages(r.packed.data(), bytes);  // hundreds of MB are first touched below
    r.packed.assign(bytes, 0x88);
  }
  r.scales.resize(static_cast<size_t>(rows * (cols / group)));
  r.group_sums.resize(static_cast<size_t>(rows * (cols / group)));
  return r;
}

// dst row k, byte c = src row c, byte k, for an 8 x 8 block of bytes (rows `src_stride` and
// `dst_stride` bytes apart): three rounds of swaps between rows 1, 2 and 4 apart, in 64-bit words.
inline void transpose8x8(const uint8_t* src, int64_t src_stride, uint8_t* dst, int64_t dst_stride) {
  uint64_t a[8];
  for (int k = 0; k < 8; ++k) std::memcpy(&a[k], src + k * src_stride, 8);
  auto swap = [&](int lo, int hi, int shift, uint64_t mask) {
    const uint64_t t = ((a[lo] >> shift) ^ a[hi]) & mask;
    a[hi] ^= t;
    a[lo] ^= t << shift;
  };
  for (int k = 0; k < 8; k += 2) swap(k, k + 1, 8, 0x00FF00FF00FF00FFull);
  for (int k : {0, 1, 4, 5}) swap(k, k + 2, 16, 0x0000FFFF0000FFFFull);
  for (int k = 0; k < 4; ++k) swap(k, k + 4, 32, 0x00000000FFFFFFFFull);
  for (int k = 0; k < 8; ++k) std::memcpy(dst + k * dst_stride, &a[k], 8);
}

// quantize_int4_grouped of a matrix stored transposed (a MatMul's [K, N] weight, read as [N, K]),
// group by group: the group's K-rows of the source are read once, in order, and every output row n
// is quantized across them at once (vectorizable over n), two K-positions per packed byte.
VKC_VECTOR_CLONES Int4Grouped quantize_int4_grouped_columns(RowReader& source, int64_t rows, int64_t cols,
                                                             int64_t group, bool pack) {
  Int4Grouped r = empty_int4_grouped(rows, cols, group, pack);
  const int64_t groups = cols / group;
  const int64_t row_bytes = pad8(cols) / 2;
  const size_t n_rows = static_cast<size_t>(rows);
  std::vector<float> amax(n_rows), scale(n_rows), inv(n_rows), sum(n_rows), gs(n_rows), gn(n_rows), q0(n_rows),
      q1(n_rows);
  // An even group packs whole bytes: they are gathered per group, K pair by K pair (group/2 x rows,
  // contiguous per pair so the packing vectorizes, cache-resident), then stored row by row: not one
  // byte per row per K pair across the whole output.
  // A flush covers whole groups and at least a 64-byte cache line of each output row.
  const bool tiled = group % 2 == 0;
  const int64_t half = group / 2;
  const int64_t tile_groups = tiled ? std::max<int64_t>(1, 64 / std::max<int64_t>(half, 1)) : 1;
  // The tile's pairs lie an odd number of cache lines apart: with `rows` a power of two they would
  // share a few cache sets, and the row-by-row flush (one byte of every pair) would thrash them.
  const int64_t stride = (rows + 63) / 64 * 64 + 64 * ((((rows + 63) / 64) % 2) ? 2 : 1);
  std::vector<uint8_t> tile_bytes(tiled ? static_cast<size_t>(stride * half * tile_groups) : 0);
  for (int64_t g = 0; g < groups; ++g) {
    const float* tile = source.range(g * group * rows, group * rows);  // source rows k = g * group .. + group
    std::fill(amax.begin(), amax.end(), 0.0f);
    for (int64_t i = 0; i < group; ++i) {
      const float* x = tile + i * rows;
      for (int64_t n = 0; n < rows; ++n) amax[n] = std::max(amax[n], std::fabs(x[n]));
    }
    for (int64_t n = 0; n < rows; ++n) {
      scale[n] = int4_scale(amax[n]);
      inv[n] = 1.0f / scale[n];
    }
    std::fill(sum.begin(), sum.end(), 0.0f);
    std::fill(gs.begin(), gs.end(), 0.0f);
    std::fill(gn.begin(), gn.end(), 0.0f);
    for (int64_t i = 0; i < group; ++i) {
      const float* x = tile + i * rows;
      const int64_t k = g * group + i;
      float* qk = (k & 1) ? q1.data() : q0.data();
      for (int64_t n = 0; n < rows; ++n) {  // branch-free: vectorizes over n
        const float q = std::min(std::max(round_even(x[n] * inv[n]), -8.0f), 7.0f);
        qk[n] = q;
        sum[n] += q;
        const float e = x[n] - q * scale[n];
        gs[n] += x[n] * x[n];
        gn[n] += e * e;
      }
      if (((k & 1) == 0 && k + 1 < cols) || !pack) continue;
      if (tiled) {  // the group's bytes of every row, written out row by row below
        uint8_t* t = tile_bytes.data() + ((g % tile_groups) * half + i / 2) * stride;
        for (int64_t n = 0; n < rows; ++n)  // (q1 + 8) * 16 + (q0 + 8) in [0, 255], exact in float
          t[n] = static_cast<uint8_t>(static_cast<int32_t>(q1[n] * 16.0f + q0[n] + 136.0f));
        continue;
      }
      // A byte per row: positions k - 1 and k, or k alone when it is the last of an odd K (the
      // high nibble stays padding, q = 0).
      uint8_t* out = r.packed.data() + k / 2;
      if (k & 1) {
        for (int64_t n = 0; n < rows; ++n)
          out[n * row_bytes] = static_cast<uint8_t>((static_cast<int>(q1[n]) + 8) << 4 | (static_cast<int>(q0[n]) + 8));
      } else {
        for (int64_t n = 0; n < rows; ++n) out[n * row_bytes] = static_cast<uint8_t>(0x80 | (static_cast<int>(q0[n]) + 8));
      }
    }
    if (pack && tiled && (g % tile_groups == tile_groups - 1 || g == groups - 1)) {
      const int64_t first = g - g % tile_groups, bytes = (g - first + 1) * half;
      uint8_t* base = r.packed.data() + first * half;
      int64_t n = 0;
      if (bytes % 8 == 0)  // 8 x 8 byte blocks: 8 loads, a register transpose, 8 stores
        for (; n + 8 <= rows; n += 8)
          for (int64_t j = 0; j < bytes; j += 8)
            transpose8x8(tile_bytes.data() + j * stride + n, stride, base + n * row_bytes + j, row_bytes);
      for (; n < rows; ++n) {
        uint8_t* out = base + n * row_bytes;
        for (int64_t j = 0; j < bytes; ++j) out[j] = tile_bytes[static_cast<size_t>(j * stride + n)];
      }
    }
    for (int64_t n = 0; n < rows; ++n) {
      r.scales[static_cast<size_t>(n * groups + g)] = scale[n];
      r.group_sums[static_cast<size_t>(n * groups + g)] = static_cast<int32_t>(sum[n]);
      r.signal += gs[n];
      r.noise += gn[n];
    }
    source.used_up_to((g + 1) * group * rows);
  }
  return r;
}

}  // namespace

Int4Grouped quantize_int4_grouped(RowReader rows_of, int64_t rows, int64_t cols, int64_t group, bool pack) {
  if (group <= 0 || cols % group != 0) throw std::invalid_argument("cols must be a multiple of the group size");
  if (rows_of.transposed()) return quantize_int4_grouped_columns(rows_of, rows, cols, group, pack);
  Int4Grouped r = empty_int4_grouped(rows, cols, group, pack);
  const int64_t groups = cols / group;
  const int64_t row_bytes = pad8(cols) / 2;
  std::vector<float> qrow(static_cast<size_t>(cols));
  for (int64_t n = 0; n < rows; ++n) {
    const float* wr = rows_of.row(n);
    double signal = 0, noise = 0;
    for (int64_t g = 0; g < groups; ++g) {
      const float* wg = wr + g * group;
      float amax = 0;
      for (int64_t i = 0; i < group; ++i) amax = std::max(amax, std::fabs(wg[i]));
      const float scale = int4_scale(amax);
      const float inv = 1.0f / scale;
      float* qg = qrow.data() + g * group;
      float sum = 0, gs = 0, gn = 0;  // per group in float (exact for sums of q; SQNR needs no more)
      for (int64_t i = 0; i < group; ++i) {
        const float q = std::clamp(round_even(wg[i] * inv), -8.0f, 7.0f);
        qg[i] = q;
        sum += q;
        const float e = wg[i] - q * scale;
        gs += wg[i] * wg[i];
        gn += e * e;
      }
      signal += gs;
      noise += gn;
      r.scales[n * groups + g] = scale;
      r.group_sums[n * groups + g] = static_cast<int32_t>(sum);
    }
    if (pack) {
      uint8_t* out = r.packed.data() + n * row_bytes;
      for (int64_t j = 0; j < cols / 2; ++j)
        out[j] = static_cast<uint8_t>((static_cast<int>(qrow[2 * j + 1]) + 8) << 4 | (static_cast<int>(qrow[2 * j]) + 8));
      if (cols % 2) out[cols / 2] = static_cast<uint8_t>(0x80 | (static_cast<int>(qrow[cols - 1]) + 8));
    }
    r.signal += signal;
    r.noise += noise;
    if (!rows_of.transposed()) rows_of.used_up_to((n + 1) * cols);
  }
  return r;
}

ir::TensorData packed_int4_rows(const ir::TensorData& weight, bool half, bool transposed, int64_t rows, int64_t cols,
                                int64_t padded_cols, int64_t group) {
  const int64_t row_bytes = pad8(padded_cols) / 2;
  const size_t element = half ? sizeof(uint16_t) : sizeof(float);
  // Rows per block: a transposed weight's block is its source's [cols, m] columns, read K row by
  // K row (m values each) and quantized by the columns path, as run_jobs does; about 8 MiB of floats.
  const int64_t block_rows = std::clamp<int64_t>((int64_t{2} << 20) / std::max<int64_t>(cols, 1) / 8 * 8, 64, 1024);
  constexpr uint64_t kRowReleaseBytes = uint64_t{64} << 20;
  return ir::TensorData::derived(
      static_cast<size_t>(rows * row_bytes), static_cast<size_t>(row_bytes),
      [=](uint64_t first, uint64_t n, uint8_t* out) {
        const int64_t n0 = static_cast<int64_t>(first) / row_bytes, count = static_cast<int64_t>(n) / row_bytes;
        const uint8_t* w = weight.data();
        // Source elements [at, at + k) as floats into `dst`.
        auto load = [&](int64_t at, int64_t k, float* dst) {
          if (!half) {
            std::memcpy(dst, w + at * sizeof(float), static_cast<size_t>(k) * sizeof(float));
            return;
          }
          for (int64_t i = 0; i < k; ++i) {
            uint16_t h;
            std::memcpy(&h, w + (at + i) * sizeof(uint16_t), sizeof h);
            dst[i] = ir::half_to_float(h);
          }
        };
        const bool by_rows = weight.file_backed() && weight.size() >= kRowReleaseBytes;
        std::vector<float> block;
        for (int64_t b = 0; b < count; b += block_rows) {
          const int64_t m = std::min(block_rows, count - b), row0 = n0 + b;
          Int4Grouped q;
          if (transposed) {
            // Source [cols, rows]: columns row0 .. row0 + m of every K row, as [cols, m].
            block.resize(static_cast<size_t>(cols * m));
            for (int64_t k = 0; k < cols; ++k) {
              load(k * rows + row0, m, block.data() + k * m);
              if (by_rows && (k % 64 == 63 || k == cols - 1)) {
                const int64_t k0 = k - k % 64;
                weight.release(static_cast<uint64_t>(k0 * rows) * element, static_cast<uint64_t>((k - k0 + 1) * rows) * element);
              }
            }
            if (padded_cols == cols) {
              q = quantize_int4_grouped(RowReader(block.data(), m, cols, true), m, cols, group);
            } else {  // as run_jobs pads: the rows, read transposed, then zero columns
              RowReader reader(block.data(), m, cols, true);
              std::vector<float> padded(static_cast<size_t>(m * padded_cols), 0.0f);
              for (int64_t r = 0; r < m; ++r)
                std::memcpy(padded.data() + r * padded_cols, reader.row(r), static_cast<size_t>(cols) * sizeof(float));
              q = quantize_int4_grouped(padded.data(), m, padded_cols, group);
            }
          } else {
            block.assign(static_cast<size_t>(m * padded_cols), 0.0f);
            for (int64_t r = 0; r < m; ++r) load((row0 + r) * cols, cols, block.data() + r * padded_cols);
            q = quantize_int4_grouped(block.data(), m, padded_cols, group);
            weight.release(static_cast<uint64_t>(row0 * cols) * element, static_cast<uint64_t>(m * cols) * element);
          }
          std::memcpy(out + b * row_bytes, q.packed.data(), q.packed.size());
        }
        if (transposed && n0 + count == rows) weight.release(0, weight.size());
      });
}

Int8PerChannel quantize_int8_per_channel(RowReader rows_of, int64_t rows, int64_t cols) {
  Int8PerChannel r;
  r.rows = rows;
  r.cols = cols;
  r.q.resize(static_cast<size_t>(rows * cols));
  r.scales.resize(static_cast<size_t>(rows));
  for (int64_t n = 0; n < rows; ++n) {
    const float* wr = rows_of.row(n);
    float amax = 0;
    for (int64_t i = 0; i < cols; ++i) amax = std::max(amax, std::fabs(wr[i]));
    const float scale = std::max(amax / 127.0f, kEps);
    const float inv = 1.0f / scale;
    double signal = 0, noise = 0;
    for (int64_t i = 0; i < cols; ++i) {
      const float q = std::clamp(round_even(wr[i] * inv), -127.0f, 127.0f);
      r.q[n * cols + i] = static_cast<int8_t>(q);
      const float e = wr[i] - q * scale;
      signal += static_cast<double>(wr[i]) * wr[i];
      noise += static_cast<double>(e) * e;
    }
    r.scales[n] = scale;
    r.signal += signal;
    r.noise += noise;
    if (!rows_of.transposed()) rows_of.used_up_to((n + 1) * cols);
  }
  return r;
}

std::vector<uint8_t> pack_int4(std::span<const int8_t> q, int64_t rows, int64_t cols) {
  const int64_t row_bytes = pad8(cols) / 2;
  std::vector<uint8_t> out(static_cast<size_t>(rows * row_bytes), 0x88);
  for (int64_t n = 0; n < rows; ++n)
    for (int64_t k = 0; k < cols; ++k) {
      uint8_t& b = out[n * row_bytes + k / 2];
      const uint8_t nib = static_cast<uint8_t>(q[n * cols + k] + 8) & 0xF;
      b = (k % 2) ? static_cast<uint8_t>((b & 0x0F) | nib << 4) : static_cast<uint8_t>((b & 0xF0) | nib);
    }
  return out;
}

std::vector<int8_t> unpack_int4(std::span<const uint8_t> packed, int64_t rows, int64_t cols) {
  const int64_t row_bytes = pad8(cols) / 2;
  std::vector<int8_t> q(static_cast<size_t>(rows * cols));
  for (int64_t n = 0; n < rows; ++n)
    for (int64_t k = 0; k < cols; ++k) {
      const uint8_t b = packed[n * row_bytes + k / 2];
      q[n * cols + k] = static_cast<int8_t>(((k % 2) ? b >> 4 : b & 0xF) - 8);
    }
  return q;
}

double sqnr_db(double signal, double noise) {
  if (noise <= 0) return 200.0;
  if (signal <= 0) return 0.0;
  return 10.0 * std::log10(signal / noise);
}

namespace {

// The whole pages inside [data, data + size), as [begin, end).
std::pair<uintptr_t, uintptr_t> inner_pages(const void* data, size_t size, uintptr_t page) {
  const auto begin = (reinterpret_cast<uintptr_t>(data) + page - 1) / page * page;
  const auto end = (reinterpret_cast<uintptr_t>(data) + size) / page * page;
  return {begin, std::max(begin, end)};
}

}  // namespace

void prefer_huge_pages(const void* data, size_t size) {
  constexpr uintptr_t kHuge = uintptr_t{2} << 20;
  if (size < 2 * kHuge) return;  // smaller buffers hold no aligned huge page for sure
  const auto [begin, end] = inner_pages(data, size, kHuge);
  if (end > begin) ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
}

void populate_pages(const void* data, size_t size) {
#ifndef MADV_POPULATE_READ
  constexpr int MADV_POPULATE_READ = 22;  // Linux 5.14; older kernels answer EINVAL, which is harmless
#endif
  const auto [begin, end] = inner_pages(data, size, static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE)));
  if (end > begin) ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_POPULATE_READ);
}

void release_pages(const void* data, size_t size, bool file_backed) {
  const auto [begin, end] = inner_pages(data, size, static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE)));
  if (end <= begin) return;
  // Only a private read-only file mapping may be DONTNEED'ed: anonymous memory would read back zeros.
  if (file_backed) {
    ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
    return;
  }
#ifdef MADV_PAGEOUT
  ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_PAGEOUT);
#endif
}

}  // namespace vkc::passes::quant
