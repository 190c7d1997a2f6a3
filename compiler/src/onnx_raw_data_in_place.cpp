// The wire-format walk of onnx_raw_data_in_place.h: ModelProto.graph (field 7) ->
// GraphProto.initializer (field 5) -> TensorProto.raw_data (field 9). Every other field is copied
// as it is; the messages on the path are written again with their new lengths.
#include "onnx_raw_data_in_place.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/wire_format_lite.h>
#include <onnx/onnx_pb.h>

#include <climits>
#include <optional>
#include <vector>

namespace vkc::compiler::detail {

namespace {

namespace pbio = google::protobuf::io;
using WFL = google::protobuf::internal::WireFormatLite;

constexpr int kModelGraph = 7, kGraphInitializer = 5, kTensorRawData = 9;

/// raw_data left in the file: initializer `index` of the main graph, bytes [offset, offset + length).
struct InPlace {
  int index;
  uint64_t offset, length;
};

struct Walk {
  const uint8_t* base;  // the file's first byte
  std::vector<InPlace> in_place;
  int initializers = 0;  // main-graph initializers seen so far (their index in the parsed message)
};

/// Skips the value of a field whose tag `in` has just read. False on a malformed value (or a
/// group, which ONNX does not use).
bool skip_field(pbio::CodedInputStream& in, uint32_t tag) {
  switch (WFL::GetTagWireType(tag)) {
    case WFL::WIRETYPE_VARINT: {
      uint64_t v;
      return in.ReadVarint64(&v);
    }
    case WFL::WIRETYPE_FIXED64: {
      uint64_t v;
      return in.ReadLittleEndian64(&v);
    }
    case WFL::WIRETYPE_FIXED32: {
      uint32_t v;
      return in.ReadLittleEndian32(&v);
    }
    case WFL::WIRETYPE_LENGTH_DELIMITED: {
      uint32_t n;
      return in.ReadVarint32(&n) && n <= INT_MAX && in.Skip(static_cast<int>(n));
    }
    default:
      return false;
  }
}

/// Copies the message [p, p + n) (at depth 0 a ModelProto, 1 a GraphProto, 2 a TensorProto) into
/// `out`, descending along the path and leaving large raw_data out at depth 2.
bool copy_message(const uint8_t* p, size_t n, int depth, Walk& walk, std::string& out) {
  pbio::CodedInputStream in(p, static_cast<int>(n));
  in.SetTotalBytesLimit(INT_MAX);
  while (true) {
    const int start = in.CurrentPosition();
    const uint32_t tag = in.ReadTag();
    if (tag == 0) return in.CurrentPosition() == static_cast<int>(n);  // the end (or a malformed tag)
    const int field = static_cast<int>(WFL::GetTagFieldNumber(tag));
    const bool length_delimited = WFL::GetTagWireType(tag) == WFL::WIRETYPE_LENGTH_DELIMITED;
    const bool descend = length_delimited && ((depth == 0 && field == kModelGraph) ||
                                              (depth == 1 && field == kGraphInitializer));
    const bool raw = length_delimited && depth == 2 && field == kTensorRawData;
    if (!descend && !raw) {
      if (!skip_field(in, tag)) return false;
      out.append(reinterpret_cast<const char*>(p + start), static_cast<size_t>(in.CurrentPosition() - start));
      continue;
    }
    uint32_t len;
    if (!in.ReadVarint32(&len) || len > n - static_cast<size_t>(in.CurrentPosition())) return false;
    const uint8_t* body = p + in.CurrentPosition();
    if (!in.Skip(static_cast<int>(len))) return false;
    if (raw) {
      if (len >= kInPlaceRawDataBytes) {
        walk.in_place.push_back({walk.initializers, static_cast<uint64_t>(body - walk.base), len});
      } else {
        out.append(reinterpret_cast<const char*>(p + start), static_cast<size_t>(in.CurrentPosition() - start));
      }
      continue;
    }
    std::string inner;
    const size_t lifted = walk.in_place.size();
    if (!copy_message(body, len, depth + 1, walk, inner)) return false;
    // A tensor's raw_data given twice: the last one counts (protobuf's merge); keep only that.
    if (depth == 1 && walk.in_place.size() > lifted + 1) walk.in_place.erase(walk.in_place.begin() + lifted, walk.in_place.end() - 1);
    if (depth == 1) ++walk.initializers;
    uint8_t head[10];  // two varint32s of at most 5 bytes
    uint8_t* end = pbio::CodedOutputStream::WriteVarint32ToArray(tag, head);
    end = pbio::CodedOutputStream::WriteVarint32ToArray(static_cast<uint32_t>(inner.size()), end);
    out.append(reinterpret_cast<const char*>(head), static_cast<size_t>(end - head));
    out.append(inner);
  }
}

}  // namespace

std::shared_ptr<onnx::ModelProto> parse_with_raw_data_in_place(std::span<const uint8_t> bytes,
                                                               const std::string& location) {
  if (bytes.size() > INT_MAX) return nullptr;
  Walk walk{bytes.data(), {}, 0};
  std::string stripped;
  if (!copy_message(bytes.data(), bytes.size(), 0, walk, stripped)) return nullptr;
  auto model = std::make_shared<onnx::ModelProto>();
  if (!model->ParseFromString(stripped)) return nullptr;
  if (walk.in_place.empty()) return model;
  auto& inits = *model->mutable_graph()->mutable_initializer();
  for (const InPlace& at : walk.in_place) {
    if (at.index >= inits.size()) return nullptr;
    onnx::TensorProto& t = inits[at.index];
    // A tensor that also names other data would be ambiguous here: the ordinary parse decides.
    if (t.has_raw_data() || t.data_location() == onnx::TensorProto_DataLocation_EXTERNAL || t.external_data_size() > 0)
      return nullptr;
    t.set_data_location(onnx::TensorProto_DataLocation_EXTERNAL);
    for (const auto& [key, value] : {std::pair<const char*, std::string>{"location", location},
                                     {"offset", std::to_string(at.offset)},
                                     {"length", std::to_string(at.length)}}) {
      auto* entry = t.add_external_data();
      entry->set_key(key);
      entry->set_value(value);
    }
  }
  return model;
}

}  // namespace vkc::compiler::detail
