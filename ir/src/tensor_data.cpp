#include "vkc/ir/tensor_data.h"

namespace vkc::ir {

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

}  // namespace vkc::ir
