// Immutable bytes of a constant tensor, either owned or a view into memory
// that something else keeps alive (a memory-mapped external-data file, the
// parsed ONNX protobuf). Copies share the bytes; nothing is copied.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

namespace vkc::ir {

class TensorData {
 public:
  TensorData() = default;

  /// Takes ownership of `bytes`.
  static TensorData owned(std::vector<uint8_t> bytes);
  /// A view of [data, data+size) kept valid by `owner`.
  static TensorData view(std::shared_ptr<const void> owner, const uint8_t* data, size_t size);
  /// A view into a read-only file mapping (external data): its pages can be dropped from the
  /// process and are read back from the file (the page cache) if touched again.
  static TensorData file_view(std::shared_ptr<const void> owner, const uint8_t* data, size_t size);
  bool file_backed() const { return file_backed_; }

  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  std::span<const uint8_t> bytes() const { return {data_, size_}; }
  bool empty() const { return size_ == 0; }

  template <typename T>
  std::span<const T> as() const {
    return {reinterpret_cast<const T*>(data_), size_ / sizeof(T)};
  }

 private:
  std::shared_ptr<const void> owner_;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  bool file_backed_ = false;
};

}  // namespace vkc::ir
