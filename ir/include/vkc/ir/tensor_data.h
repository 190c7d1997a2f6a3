// Immutable bytes of a constant tensor: owned, a view into memory that something else keeps alive
// (a memory-mapped external-data file, the parsed ONNX protobuf), or derived: computed from other
// bytes on demand (a transposed weight, a dtype conversion), so that a compile never holds a
// model's converted weights as a whole. Copies share the bytes; nothing is copied.
//
// Consumers that stream (hashing, the file writers) read a derived tensor range by range through
// read() and hold nothing; data() computes all of it once and keeps it, so every other consumer
// works unchanged.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

namespace vkc::ir {

class TensorData {
 public:
  /// Writes bytes [first, first + n) of a derived tensor, whole units of `unit` bytes (an element or
  /// a row): `first` and `n` are multiples of the unit given to derived().
  using Fill = std::function<void(uint64_t first, uint64_t n, uint8_t* out)>;

  TensorData() = default;

  /// Takes ownership of `bytes`.
  static TensorData owned(std::vector<uint8_t> bytes);
  /// A view of [data, data+size) kept valid by `owner`.
  static TensorData view(std::shared_ptr<const void> owner, const uint8_t* data, size_t size);
  /// A view into a read-only file mapping (external data): its pages can be dropped from the
  /// process and are read back from the file (the page cache) if touched again. With `fd` (open
  /// as long as `owner` lives) and the bytes' `file_offset` in it, scattered reads of a large view
  /// go through pread instead of faulting the mapping in (read_file()).
  static TensorData file_view(std::shared_ptr<const void> owner, const uint8_t* data, size_t size, int fd = -1,
                              uint64_t file_offset = 0);
  /// `size` bytes that `fill` computes on demand, in units of `unit` bytes (size a multiple of it).
  static TensorData derived(size_t size, size_t unit, Fill fill);

  bool file_backed() const { return file_backed_; }
  /// Whether read_file() works: a file view given its descriptor.
  bool has_file() const { return fd_ >= 0; }
  /// Bytes [offset, offset + out.size()) of a file view read from its file (pread), the mapping
  /// untouched; throws std::runtime_error on a failing or short read.
  void read_file(uint64_t offset, std::span<uint8_t> out) const;
  bool is_derived() const { return lazy_ != nullptr; }

  /// The bytes; a derived tensor is computed on the first call and kept.
  const uint8_t* data() const { return lazy_ ? materialize() : data_; }
  size_t size() const { return size_; }
  std::span<const uint8_t> bytes() const { return {data(), size_}; }
  bool empty() const { return size_ == 0; }

  template <typename T>
  std::span<const T> as() const {
    return {reinterpret_cast<const T*>(data()), size_ / sizeof(T)};
  }

  /// Bytes [offset, offset + out.size()) into `out`, any range, without keeping a derived tensor.
  void read(uint64_t offset, std::span<uint8_t> out) const;
  /// Lets go of this process's pages of a file-backed view within [offset, offset + n) (pages
  /// wholly inside; read back from the file if touched again); nothing for other kinds.
  void release(uint64_t offset, uint64_t n) const;
  /// Asks the kernel to read a file view's bytes into the page cache ahead of use, in large
  /// sequential reads (POSIX_FADV_WILLNEED; returns at once); nothing for other kinds.
  void prefetch() const;

  /// Calls `visit(offset, bytes)` over the whole tensor in order, `chunk` bytes at a time: views
  /// are passed in place (and file-backed pages let go of once visited), derived bytes are
  /// computed into one buffer of `chunk` bytes. Memory held: one chunk.
  void stream(size_t chunk, const std::function<void(uint64_t, std::span<const uint8_t>)>& visit) const;

 private:
  struct Lazy;
  const uint8_t* materialize() const;

  std::shared_ptr<const void> owner_;
  std::shared_ptr<Lazy> lazy_;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  bool file_backed_ = false;
  int fd_ = -1;
  uint64_t file_offset_ = 0;
};

/// Whether `a` and `b` hold the same bytes; derived tensors are compared a range at a time,
/// never held whole.
bool equal_bytes(const TensorData& a, const TensorData& b);

/// The data of a [rows, cols] matrix of `element`-byte elements, transposed ([cols, rows]), as a
/// derived tensor: computed in cache-sized tiles when read, the source's file pages let go of as
/// its columns are used up.
TensorData transposed(const TensorData& source, int64_t rows, int64_t cols, size_t element);

}  // namespace vkc::ir
