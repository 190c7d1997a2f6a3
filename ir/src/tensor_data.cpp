#include "vkc/ir/tensor_data.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <mutex>
#include <stdexcept>

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

TensorData TensorData::file_view(std::shared_ptr<const void> owner, const uint8_t* data, size_t size) {
  TensorData d = view(std::move(owner), data, size);
  d.file_backed_ = true;
  return d;
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

// dst [c1 - c0, rows] = columns [c0, c1) of src [rows, cols], in square tiles, a block of kTile
// source rows at a time; done(r0, r1) after each block.
template <typename T, typename Done>
void transpose_columns(const T* src, T* dst, int64_t rows, int64_t cols, int64_t c0, int64_t c1, Done done) {
  constexpr int64_t kTile = 64;
  for (int64_t r0 = 0; r0 < rows; r0 += kTile) {
    const int64_t r1 = std::min(rows, r0 + kTile);
    for (int64_t t0 = c0; t0 < c1; t0 += kTile) {
      const int64_t t1 = std::min(c1, t0 + kTile);
      for (int64_t c = t0; c < t1; ++c)
        for (int64_t r = r0; r < r1; ++r) dst[(c - c0) * rows + r] = src[r * cols + c];
    }
    done(r0, r1);
  }
}

// A file-backed source lets go of its pages when its last column is read. One this large also lets
// go of each block of rows as soon as it has been read: a band of columns touches every row, and a
// read fault maps far more than the page it hits (fault-around; a whole large folio, 2 MiB, on
// recent kernels), so column-band bookkeeping would hold the whole source anyway.
constexpr size_t kRowReleaseBytes = size_t{64} << 20;

}  // namespace

TensorData transposed(const TensorData& source, int64_t rows, int64_t cols, size_t element) {
  if (element != 1 && element != 2 && element != 4 && element != 8)
    throw std::logic_error("transposed: unsupported element size");
  if (static_cast<uint64_t>(rows * cols) * element != source.size())
    throw std::logic_error("transposed: the shape does not match the bytes");
  const size_t row_bytes = static_cast<size_t>(rows) * element;  // one row of the result
  return TensorData::derived(source.size(), row_bytes, [=](uint64_t first, uint64_t n, uint8_t* out) {
    const int64_t c0 = static_cast<int64_t>(first / row_bytes), c1 = c0 + static_cast<int64_t>(n / row_bytes);
    const uint8_t* src = source.data();
    const uint64_t src_row = static_cast<uint64_t>(cols) * element;
    const bool by_rows = source.file_backed() && source.size() >= kRowReleaseBytes;
    auto done = [&](int64_t r0, int64_t r1) {
      if (by_rows) source.release(r0 * src_row, (r1 - r0) * src_row);
    };
    switch (element) {
      case 1: transpose_columns(src, out, rows, cols, c0, c1, done); break;
      case 2:
        transpose_columns(reinterpret_cast<const uint16_t*>(src), reinterpret_cast<uint16_t*>(out), rows, cols, c0, c1, done);
        break;
      case 4:
        transpose_columns(reinterpret_cast<const uint32_t*>(src), reinterpret_cast<uint32_t*>(out), rows, cols, c0, c1, done);
        break;
      default:
        transpose_columns(reinterpret_cast<const uint64_t*>(src), reinterpret_cast<uint64_t*>(out), rows, cols, c0, c1, done);
        break;
    }
    if (c1 == cols) source.release(0, source.size());
  });
}

}  // namespace vkc::ir
