#include "vkc/ir/tensor_data.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <string>
#include <mutex>
#include <stdexcept>
#include <type_traits>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace vkc::ir {

struct TensorData::Lazy {
  size_t unit;
  Fill fill;
  std::once_flag once;
  std::atomic<bool> ready{false};
  std::vector<uint8_t> bytes;
};

TensorData TensorData::owned(std::vector<uint8_t> bytes) {
  auto holder = std::make_shared<const std::vector<uint8_t>>(std::move(bytes));
  TensorData d;
  d.data_ = holder->data();
  d.size_ = holder->size();
  d.owner_ = std::move(holder);
  return d;
}

TensorData TensorData::view(std::shared_ptr<const void> owner, const uint8_t* data, size_t size) {
  TensorData d;
  d.owner_ = std::move(owner);
  d.data_ = data;
  d.size_ = size;
  return d;
}

TensorData TensorData::file_view(std::shared_ptr<const void> owner, const uint8_t* data, size_t size, int fd,
                                 uint64_t file_offset) {
  TensorData d = view(std::move(owner), data, size);
  d.file_backed_ = true;
  d.fd_ = fd;
  d.file_offset_ = file_offset;
  return d;
}

void TensorData::read_file(uint64_t offset, std::span<uint8_t> out) const {
  if (fd_ < 0) throw std::logic_error("TensorData::read_file: no file");
  if (offset > size_ || out.size() > size_ - offset) throw std::out_of_range("TensorData::read_file past the end");
  for (size_t done = 0; done < out.size();) {
    const ssize_t got = ::pread(fd_, out.data() + done, out.size() - done, static_cast<off_t>(file_offset_ + offset + done));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) throw std::runtime_error(std::string("cannot read external data: ") + (got < 0 ? std::strerror(errno) : "the file is shorter than it was"));
    done += static_cast<size_t>(got);
  }
}

TensorData TensorData::derived(size_t size, size_t unit, Fill fill) {
  if (unit == 0 || size % unit != 0) throw std::logic_error("TensorData::derived: size is not a multiple of the unit");
  TensorData d;
  d.size_ = size;
  if (size == 0) return d;
  d.lazy_ = std::make_shared<Lazy>();
  d.lazy_->unit = unit;
  d.lazy_->fill = std::move(fill);
  return d;
}

const uint8_t* TensorData::materialize() const {
  Lazy& l = *lazy_;
  std::call_once(l.once, [&] {
    l.bytes.resize(size_);
    l.fill(0, size_, l.bytes.data());
    l.ready.store(true, std::memory_order_release);
  });
  return l.bytes.data();
}

void TensorData::read(uint64_t offset, std::span<uint8_t> out) const {
  if (offset > size_ || out.size() > size_ - offset) throw std::out_of_range("TensorData::read past the end");
  if (out.empty()) return;
  if (!lazy_ || lazy_->ready.load(std::memory_order_acquire)) {
    std::memcpy(out.data(), data() + offset, out.size());
    return;
  }
  // Whole units straight into `out`; a unit cut by either end through a one-unit buffer.
  const uint64_t unit = lazy_->unit, end = offset + out.size();
  const uint64_t first = (offset + unit - 1) / unit * unit, last = std::max(first, end / unit * unit);
  std::vector<uint8_t> edge;
  auto partial = [&](uint64_t unit_start) {
    edge.resize(unit);
    lazy_->fill(unit_start, unit, edge.data());
    const uint64_t b = std::max(offset, unit_start), e = std::min(end, unit_start + unit);
    std::memcpy(out.data() + (b - offset), edge.data() + (b - unit_start), e - b);
  };
  // In order: a fill that ends the tensor may let go of what its source read (transposed()).
  if (offset < first) partial(first - unit);
  if (last > first) lazy_->fill(first, last - first, out.data() + (first - offset));
  if (end > last) partial(last);
}

void TensorData::release(uint64_t offset, uint64_t n) const {
  if (!file_backed_ || offset >= size_) return;
  n = std::min<uint64_t>(n, size_ - offset);
  const auto page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  const auto at = reinterpret_cast<uintptr_t>(data_ + offset);
  const uintptr_t begin = (at + page - 1) / page * page, end = (at + n) / page * page;
  // A private read-only file mapping: the pages come back from the file if touched again.
  if (end > begin) ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
}

void TensorData::prefetch() const {
  if (fd_ >= 0 && size_ > 0)
    ::posix_fadvise(fd_, static_cast<off_t>(file_offset_), static_cast<off_t>(size_), POSIX_FADV_WILLNEED);
}

void TensorData::stream(size_t chunk, const std::function<void(uint64_t, std::span<const uint8_t>)>& visit) const {
  if (!lazy_ || lazy_->ready.load(std::memory_order_acquire)) {
    const uint8_t* p = data();
    for (uint64_t off = 0; off < size_; off += chunk) {
      const uint64_t n = std::min<uint64_t>(chunk, size_ - off);
      visit(off, {p + off, n});
      release(off, n);
    }
    return;
  }
  const uint64_t unit = lazy_->unit, step = std::max<uint64_t>(unit, chunk / unit * unit);
  std::vector<uint8_t> buffer(std::min<uint64_t>(step, size_));
  for (uint64_t off = 0; off < size_; off += step) {
    const uint64_t n = std::min<uint64_t>(step, size_ - off);
    lazy_->fill(off, n, buffer.data());
    visit(off, {buffer.data(), n});
  }
}

namespace {

#if defined(__SSE2__)
// 8x8 of 16-bit and 4x4 of 32-bit elements, rows `is` and `os` elements apart.
inline void transpose_block(const uint16_t* in, int64_t is, uint16_t* out, int64_t os) {
  __m128i a[8], t[8], u[8];
  for (int i = 0; i < 8; ++i) a[i] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i * is));
  for (int i = 0; i < 8; i += 2) t[i] = _mm_unpacklo_epi16(a[i], a[i + 1]), t[i + 1] = _mm_unpackhi_epi16(a[i], a[i + 1]);
  for (int i = 0; i < 8; i += 4)
    for (int j = 0; j < 2; ++j)
      u[i + 2 * j] = _mm_unpacklo_epi32(t[i + j], t[i + j + 2]), u[i + 2 * j + 1] = _mm_unpackhi_epi32(t[i + j], t[i + j + 2]);
  for (int i = 0; i < 4; ++i) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + (2 * i) * os), _mm_unpacklo_epi64(u[i], u[i + 4]));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + (2 * i + 1) * os), _mm_unpackhi_epi64(u[i], u[i + 4]));
  }
}
inline void transpose_block(const uint32_t* in, int64_t is, uint32_t* out, int64_t os) {
  __m128i a[4], t[4];
  for (int i = 0; i < 4; ++i) a[i] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i * is));
  for (int i = 0; i < 4; i += 2) t[i] = _mm_unpacklo_epi32(a[i], a[i + 1]), t[i + 1] = _mm_unpackhi_epi32(a[i], a[i + 1]);
  for (int i = 0; i < 2; ++i) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + (2 * i) * os), _mm_unpacklo_epi64(t[i], t[i + 2]));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + (2 * i + 1) * os), _mm_unpackhi_epi64(t[i], t[i + 2]));
  }
}
template <typename T>
constexpr int64_t kBlock = std::is_same_v<T, uint16_t> ? 8 : std::is_same_v<T, uint32_t> ? 4 : 0;
#else
template <typename T>
constexpr int64_t kBlock = 0;
#endif

// A tile of 64 bytes by as many rows, transposed: out[c][r] = in[r][c].
template <typename T, int64_t E>
void transpose_tile(const T (&in)[E][E], T (&out)[E][E], int64_t nr, int64_t nc) {
#if defined(__SSE2__)
  if constexpr (kBlock<T> > 0) {
    if (nr == E && nc == E) {
      for (int64_t i = 0; i < E; i += kBlock<T>)
        for (int64_t j = 0; j < E; j += kBlock<T>) transpose_block(&in[i][j], E, &out[j][i], E);
      return;
    }
  }
#endif
  for (int64_t c = 0; c < nc; ++c)
    for (int64_t r = 0; r < nr; ++r) out[c][r] = in[r][c];
}

// dst[c * dst_stride + r] = src[r * src_stride + c] for r < nr, c < nc: tiles of 64 bytes square
// copied in a row at a time (whole cache lines), transposed in the cache and copied out a column
// at a time. (Reading a column of the source in place strides by a row, and rows of a
// power-of-two size, most weights, put the whole column in one L1 set.)
template <typename T>
void transpose_rows(const T* src, int64_t src_stride, T* dst, int64_t dst_stride, int64_t nr, int64_t nc) {
  constexpr int64_t E = 64 / sizeof(T);
  alignas(64) T in[E][E];
  alignas(64) T out[E][E];
  for (int64_t t0 = 0; t0 < nc; t0 += E) {
    const int64_t tc = std::min(nc, t0 + E) - t0;
    for (int64_t r0 = 0; r0 < nr; r0 += E) {
      const int64_t tr = std::min(nr, r0 + E) - r0;
      if (tr == E && tc == E) {  // (sizes the compiler knows: moves, not calls)
        for (int64_t r = 0; r < E; ++r) std::memcpy(in[r], src + (r0 + r) * src_stride + t0, sizeof in[r]);
        transpose_tile(in, out, E, E);
        for (int64_t c = 0; c < E; ++c) std::memcpy(dst + (t0 + c) * dst_stride + r0, out[c], sizeof out[c]);
        continue;
      }
      for (int64_t r = 0; r < tr; ++r) std::memcpy(in[r], src + (r0 + r) * src_stride + t0, size_t(tc) * sizeof(T));
      transpose_tile(in, out, tr, tc);
      for (int64_t c = 0; c < tc; ++c) std::memcpy(dst + (t0 + c) * dst_stride + r0, out[c], size_t(tr) * sizeof(T));
    }
  }
}

// Source rows a block at a time (the pages a block's tiles touch stay few).
constexpr int64_t kRowBlock = 256;

// A file-backed source lets go of its pages when its last column is read: the bands of columns
// before it find them mapped (letting go after each band made every band fault the whole source in
// again: an 8B model's 112 MiB MLP weights, written in 8 MiB bands, were mapped 14 times over and
// the kernel's page-table work was half the compile). A source this large, whose pages would weigh
// on the compile's memory, is read from its file instead, a block of rows' band of columns at a
// time (pread): a band touches every row, and a fault maps far more than the page it hits
// (fault-around; a whole large folio on recent kernels), so through the mapping each band of an 8B
// model's 1 GB lm head mapped ~64 KiB a row to read 2 KiB. Without its file, it lets go of each
// block of rows once read.
constexpr size_t kRowReleaseBytes = size_t{256} << 20;

}  // namespace

bool equal_bytes(const TensorData& a, const TensorData& b) {
  if (a.size() != b.size()) return false;
  if (!a.is_derived() && !b.is_derived()) return a.size() == 0 || std::memcmp(a.data(), b.data(), a.size()) == 0;
  constexpr uint64_t kCompareChunk = uint64_t{2} << 20;
  std::vector<uint8_t> x, y;
  for (uint64_t at = 0; at < a.size(); at += kCompareChunk) {
    const uint64_t n = std::min<uint64_t>(kCompareChunk, a.size() - at);
    x.resize(n), y.resize(n);
    a.read(at, x);
    b.read(at, y);
    if (x != y) return false;
  }
  return true;
}

TensorData transposed(const TensorData& source, int64_t rows, int64_t cols, size_t element) {
  if (element != 1 && element != 2 && element != 4 && element != 8)
    throw std::logic_error("transposed: unsupported element size");
  if (static_cast<uint64_t>(rows * cols) * element != source.size())
    throw std::logic_error("transposed: the shape does not match the bytes");
  const size_t row_bytes = static_cast<size_t>(rows) * element;  // one row of the result
  return TensorData::derived(source.size(), row_bytes, [=](uint64_t first, uint64_t n, uint8_t* out) {
    const int64_t c0 = static_cast<int64_t>(first / row_bytes), nc = static_cast<int64_t>(n / row_bytes);
    const uint64_t src_row = static_cast<uint64_t>(cols) * element;
    const bool large = source.file_backed() && source.size() >= kRowReleaseBytes;
    // The first band touches every row of the source: its file is read ahead whole, in large
    // sequential reads, rather than a page (or a row's few columns) at a time as the bands reach it.
    if (c0 == 0) source.prefetch();
    std::vector<uint8_t> scratch;
    for (int64_t s0 = 0; s0 < rows; s0 += kRowBlock) {
      const int64_t nr = std::min(rows, s0 + kRowBlock) - s0;
      const uint8_t* src = nullptr;
      int64_t stride = cols;
      if (!(large && source.has_file()) && !source.is_derived()) src = source.data() + s0 * src_row + c0 * element;
      if ((large && source.has_file()) || source.is_derived()) {
        // Just the block's columns, read from the file (the mapping is not touched at all) or
        // computed (a derived source is never held whole).
        scratch.resize(static_cast<size_t>(nr * nc) * element);
        for (int64_t r = 0; r < nr; ++r) {
          const std::span<uint8_t> to{scratch.data() + r * nc * element, size_t(nc) * element};
          if (source.is_derived())
            source.read((s0 + r) * src_row + c0 * element, to);
          else
            source.read_file((s0 + r) * src_row + c0 * element, to);
        }
        src = scratch.data(), stride = nc;
      }
      uint8_t* dst = out + s0 * element;
      switch (element) {
        case 1: transpose_rows(src, stride, dst, rows, nr, nc); break;
        case 2:
          transpose_rows(reinterpret_cast<const uint16_t*>(src), stride, reinterpret_cast<uint16_t*>(dst), rows, nr, nc);
          break;
        case 4:
          transpose_rows(reinterpret_cast<const uint32_t*>(src), stride, reinterpret_cast<uint32_t*>(dst), rows, nr, nc);
          break;
        default:
          transpose_rows(reinterpret_cast<const uint64_t*>(src), stride, reinterpret_cast<uint64_t*>(dst), rows, nr, nc);
          break;
      }
      if (large && !source.has_file()) source.release(s0 * src_row, nr * src_row);
    }
    if (c0 + nc == cols) source.release(0, source.size());
  });
}

}  // namespace vkc::ir
