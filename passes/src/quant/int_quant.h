// Numeric core of weight quantization: grouped symmetric int4 and per-channel int8, packed
// exactly as the ExecuTorch Vulkan runtime reads them (docs/options.md "Quantization").
// Everything works row by row on a [rows, cols] fp32 matrix read in place (it may be a view
// into the mmapped model); scratch is one row.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "vkc/ir/tensor_data.h"

namespace vkc::passes::quant {

/// int4 grouped symmetric, as torchao's MappingType.SYMMETRIC with quant range [-8, 7]:
/// scale = max|w| / 7.5 per group (at least fp32 eps), q = clamp(round_half_even(w / scale), -8, 7).
struct Int4Grouped {
  int64_t rows = 0, cols = 0, group = 0;
  /// [rows, pad8(cols) / 2]: byte j of a row = (q[2j+1] + 8) << 4 | (q[2j] + 8); padding is q = 0.
  std::vector<uint8_t> packed;
  /// [rows, cols / group], row-major (transpose_scales() gives the linear ops' [G, N] layout).
  std::vector<float> scales;
  /// Per row and group: sum of q (the weight_sums of linear_dq8ca_q4gsw before transposition).
  std::vector<int32_t> group_sums;
  double signal = 0, noise = 0;  // sum w^2 and sum (w - dequant(w))^2
};

/// int8 per-channel symmetric (PT2E's per-channel symmetric observer): scale = max|w| / 127 per
/// row, q = clamp(round_half_even(w / scale), -127, 127).
struct Int8PerChannel {
  int64_t rows = 0, cols = 0;
  std::vector<int8_t> q;       // [rows, cols]
  std::vector<float> scales;   // [rows]
  double signal = 0, noise = 0;
};

/// The rows of a [rows, cols] f32 or f16 matrix, stored as is or transposed (as [cols, rows], e.g.
/// a MatMul's [K, N] weight read as the linear's [N, K]). Transposed rows are gathered kBlock at a
/// time into a small buffer (kBlock * cols floats), reading whole cache lines of the source; f16
/// values are widened to f32 (exactly) as they are read.
class RowReader {
 public:
  static constexpr int64_t kBlock = 8;
  /// `file_backed`: the source lies in a read-only file mapping, whose pages the quantizers let go
  /// of as they use them up (used_up_to), so a large weight is never resident as a whole.
  RowReader(const float* w, int64_t rows, int64_t cols, bool transposed, bool file_backed = false)
      : w_(w), rows_(rows), cols_(cols), transposed_(transposed), file_backed_(file_backed) {}
  RowReader(const uint16_t* half, int64_t rows, int64_t cols, bool transposed, bool file_backed = false)
      : h_(half), rows_(rows), cols_(cols), transposed_(transposed), file_backed_(file_backed) {}
  /// A derived tensor's f32 or f16 rows (stored as is), read range by range through
  /// TensorData::read: never computed, nor held, whole.
  RowReader(const ir::TensorData& derived, bool half, int64_t rows, int64_t cols)
      : d_(&derived), d_half_(half), rows_(rows), cols_(cols), transposed_(false), file_backed_(false) {}
  /// Row n (call with n increasing for transposed sources).
  const float* row(int64_t n);
  bool transposed() const { return transposed_; }
  /// Source elements [first, first + count) in memory order, as floats (valid until the next call).
  const float* range(int64_t first, int64_t count);
  /// The source's first `elements` elements (in memory order) will not be read again.
  void used_up_to(int64_t elements);

 private:
  const float* w_ = nullptr;
  const uint16_t* h_ = nullptr;
  const ir::TensorData* d_ = nullptr;
  bool d_half_ = false;
  std::vector<uint8_t> raw_;
  int64_t rows_, cols_;
  bool transposed_, file_backed_;
  std::vector<float> block_, range_;
  int64_t block_start_ = -1;
  int64_t released_ = 0;
};

/// cols must be a multiple of group.
/// `pack` false: the scales, group sums and error figures only (`packed` left empty), for a layer
/// whose packed bytes are made when written (packed_int4_rows).
Int4Grouped quantize_int4_grouped(RowReader rows_of, int64_t rows, int64_t cols, int64_t group, bool pack = true);
Int8PerChannel quantize_int8_per_channel(RowReader rows_of, int64_t rows, int64_t cols);
/// `w` holds rows * cols floats, row-major.
inline Int4Grouped quantize_int4_grouped(const float* w, int64_t rows, int64_t cols, int64_t group) {
  return quantize_int4_grouped(RowReader(w, rows, cols, false), rows, cols, group);
}
inline Int8PerChannel quantize_int8_per_channel(const float* w, int64_t rows, int64_t cols) {
  return quantize_int8_per_channel(RowReader(w, rows, cols, false), rows, cols);
}

/// The packed int4 weight of a linear or embedding (quantize_int4_grouped's `packed`) as derived
/// data: rows are quantized again when the program is hashed and written, a block at a time, so the
/// packed bytes of a model are never held. `weight` holds [rows, cols] f32 (f16 when `half`) values
/// ([cols, rows] when `transposed`); a row is quantized with zero columns up to `padded_cols`.
ir::TensorData packed_int4_rows(const ir::TensorData& weight, bool half, bool transposed, int64_t rows, int64_t cols,
                                int64_t padded_cols, int64_t group);

/// The scale of a group with largest magnitude `amax` and its quantized value of `x`.
float int4_scale(float amax);
int8_t int4_quantize(float x, float scale);

/// Packs q values (-8..7) of a [rows, cols] matrix: [rows, pad8(cols) / 2] bytes.
std::vector<uint8_t> pack_int4(std::span<const int8_t> q, int64_t rows, int64_t cols);
/// The inverse of pack_int4 (padding dropped).
std::vector<int8_t> unpack_int4(std::span<const uint8_t> packed, int64_t rows, int64_t cols);

/// [rows, groups] -> [groups, pad(rows, align)] (zero padding), the layout the linear ops read, as
/// the bytes of a graph constant (no second copy of a large table).
template <typename T>
std::vector<uint8_t> transpose_padded_bytes(std::span<const T> m, int64_t rows, int64_t cols, int64_t align) {
  const int64_t padded = (rows + align - 1) / align * align;
  std::vector<uint8_t> bytes(static_cast<size_t>(cols * padded) * sizeof(T), 0);
  T* t = reinterpret_cast<T*>(bytes.data());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) t[c * padded + r] = m[r * cols + c];
  return bytes;
}

/// transpose_padded_bytes, as values.
template <typename T>
std::vector<T> transpose_padded(std::span<const T> m, int64_t rows, int64_t cols, int64_t align) {
  const std::vector<uint8_t> bytes = transpose_padded_bytes(m, rows, cols, align);
  std::vector<T> t(bytes.size() / sizeof(T));
  std::memcpy(t.data(), bytes.data(), bytes.size());
  return t;
}

/// 10 log10(signal / noise) in dB; 200 when noise is 0.
double sqnr_db(double signal, double noise);

/// Asks for transparent huge pages for a large buffer not yet touched (one fault per 2 MB
/// instead of per 4 KB); a no-op for small buffers or where THP is off.
void prefer_huge_pages(const void* data, size_t size);

/// Maps the pages of [data, data + size) in one call (MADV_POPULATE_READ) before a full read,
/// instead of one page fault per few pages of a file mapping; best effort.
void populate_pages(const void* data, size_t size);

/// Tells the kernel the pages of [data, data + size) will not be read again. For a read-only file
/// mapping (`file_backed`) they leave this process's resident set and stay in the page cache
/// (MADV_DONTNEED: a later touch maps them back without disk reads); other memory gets
/// MADV_PAGEOUT, harmless (heap pages stay).
void release_pages(const void* data, size_t size, bool file_backed = false);

}  // namespace vkc::passes::quant
