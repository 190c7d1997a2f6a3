// The wire-format walk of onnx_raw_data_in_place.h along ModelProto.graph (7) -> GraphProto
// .initializer (5) and .node (1) -> NodeProto.attribute (5) -> AttributeProto.t (5) and .tensors
// (11) -> TensorProto.raw_data (9). The message protobuf then parses is a list of pieces: spans of
// the file (every field off the path, as it is) and the path's messages' new tags and lengths,
// so nothing else is copied.
#include "onnx_raw_data_in_place.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream.h>
#include <google/protobuf/wire_format_lite.h>
#include <onnx/onnx_pb.h>

#include <climits>
#include <deque>
#include <vector>

namespace vkc::compiler::detail {

namespace {

namespace pbio = google::protobuf::io;
using WFL = google::protobuf::internal::WireFormatLite;

enum class Kind { Model, Graph, Node, Attribute, Tensor };

/// The message a field of `parent` holds when the walk descends into it, or Kind::Model for none.
Kind child_of(Kind parent, int field) {
  switch (parent) {
    case Kind::Model: return field == 7 ? Kind::Graph : Kind::Model;
    case Kind::Graph: return field == 5 ? Kind::Tensor : field == 1 ? Kind::Node : Kind::Model;
    case Kind::Node: return field == 5 ? Kind::Attribute : Kind::Model;
    case Kind::Attribute: return field == 5 || field == 11 ? Kind::Tensor : Kind::Model;
    case Kind::Tensor: return Kind::Model;
  }
  return Kind::Model;
}

/// Where a lifted tensor is in the parsed message: initializer `index` (node < 0), or attribute
/// `attribute` of node `node`, its `t` (tensor < 0) or tensors[tensor].
struct TensorPath {
  int node = -1, attribute = -1, tensor = -1, index = -1;
};

struct InPlace {
  TensorPath path;
  uint64_t offset, length;
};

struct Piece {
  const uint8_t* p;
  size_t n;
};

struct Walk {
  const uint8_t* base;  // the file's first byte
  std::vector<InPlace> in_place;
  std::deque<std::string> heads;  // the path's new tags and lengths (stable addresses)
  int initializers = 0, nodes = 0;  // main-graph initializers and nodes seen so far
  TensorPath at;                    // the tensor being walked
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

void add_piece(std::vector<Piece>& out, const uint8_t* p, size_t n) {
  if (!out.empty() && out.back().p + out.back().n == p)
    out.back().n += n;  // contiguous with the last span of the file
  else
    out.push_back({p, n});
}

/// Appends the pieces of message [p, p + n) of kind `kind` to `out` and returns its new length
/// in `length`, leaving large raw_data out of tensors. False on a malformed message, or a
/// singular tensor given twice in an attribute (protobuf would merge the two).
bool walk_message(const uint8_t* p, size_t n, Kind kind, Walk& walk, std::vector<Piece>& out, size_t& length) {
  pbio::CodedInputStream in(p, static_cast<int>(n));
  in.SetTotalBytesLimit(INT_MAX);
  int attributes = 0, tensors = 0;
  bool has_t = false;
  length = 0;
  while (true) {
    const int start = in.CurrentPosition();
    const uint32_t tag = in.ReadTag();
    if (tag == 0) return in.CurrentPosition() == static_cast<int>(n);  // the end (or a malformed tag)
    const int field = static_cast<int>(WFL::GetTagFieldNumber(tag));
    const bool delimited = WFL::GetTagWireType(tag) == WFL::WIRETYPE_LENGTH_DELIMITED;
    const Kind child = delimited ? child_of(kind, field) : Kind::Model;
    const bool raw = delimited && kind == Kind::Tensor && field == 9;
    if (child == Kind::Model && !raw) {
      if (!skip_field(in, tag)) return false;
      add_piece(out, p + start, static_cast<size_t>(in.CurrentPosition() - start));
      length += static_cast<size_t>(in.CurrentPosition() - start);
      continue;
    }
    uint32_t len;
    if (!in.ReadVarint32(&len) || len > n - static_cast<size_t>(in.CurrentPosition())) return false;
    const uint8_t* body = p + in.CurrentPosition();
    if (!in.Skip(static_cast<int>(len))) return false;
    if (raw && len >= kInPlaceRawDataBytes) {
      walk.in_place.push_back({walk.at, static_cast<uint64_t>(body - walk.base), len});
      continue;
    }
    if (raw) {
      add_piece(out, p + start, static_cast<size_t>(in.CurrentPosition() - start));
      length += static_cast<size_t>(in.CurrentPosition() - start);
      continue;
    }
    // Into a message on the path: where it is, then its pieces after its new tag and length.
    if (kind == Kind::Graph && child == Kind::Tensor) walk.at = {-1, -1, -1, walk.initializers++};
    if (kind == Kind::Graph && child == Kind::Node) walk.at = {walk.nodes++, -1, -1, -1};
    if (kind == Kind::Node) walk.at.attribute = attributes++;
    if (kind == Kind::Attribute && field == 5) {
      if (has_t) return false;
      has_t = true;
      walk.at.tensor = -1;
    }
    if (kind == Kind::Attribute && field == 11) walk.at.tensor = tensors++;
    const size_t lifted = walk.in_place.size();
    std::vector<Piece> inner;
    size_t inner_length = 0;
    if (!walk_message(body, len, child, walk, inner, inner_length)) return false;
    // A tensor's raw_data given twice: the last one counts (protobuf's merge); keep only that.
    if (child == Kind::Tensor && walk.in_place.size() > lifted + 1)
      walk.in_place.erase(walk.in_place.begin() + static_cast<std::ptrdiff_t>(lifted), walk.in_place.end() - 1);
    uint8_t head[10];  // two varint32s of at most 5 bytes
    uint8_t* end = pbio::CodedOutputStream::WriteVarint32ToArray(tag, head);
    end = pbio::CodedOutputStream::WriteVarint32ToArray(static_cast<uint32_t>(inner_length), end);
    const std::string& h = walk.heads.emplace_back(reinterpret_cast<const char*>(head), static_cast<size_t>(end - head));
    out.push_back({reinterpret_cast<const uint8_t*>(h.data()), h.size()});
    for (const Piece& piece : inner) add_piece(out, piece.p, piece.n);
    length += h.size() + inner_length;
  }
}

/// The pieces as one input stream, read in place.
class PiecesStream final : public pbio::ZeroCopyInputStream {
 public:
  explicit PiecesStream(const std::vector<Piece>& pieces) : pieces_(pieces) {}
  bool Next(const void** data, int* size) override {
    while (i_ < pieces_.size() && used_ == pieces_[i_].n) ++i_, used_ = 0;
    if (i_ == pieces_.size()) return false;
    const size_t n = std::min<size_t>(pieces_[i_].n - used_, INT_MAX);
    *data = pieces_[i_].p + used_;
    *size = static_cast<int>(n);
    used_ += n;
    count_ += static_cast<int64_t>(n);
    return true;
  }
  void BackUp(int count) override {
    used_ -= static_cast<size_t>(count);
    count_ -= count;
  }
  bool Skip(int count) override {
    const void* data;
    int size;
    while (count > 0) {
      if (!Next(&data, &size)) return false;
      if (size > count) BackUp(size - count), size = count;
      count -= size;
    }
    return true;
  }
  int64_t ByteCount() const override { return count_; }

 private:
  const std::vector<Piece>& pieces_;
  size_t i_ = 0, used_ = 0;
  int64_t count_ = 0;
};

onnx::TensorProto* tensor_at(onnx::GraphProto& graph, const TensorPath& at) {
  if (at.node < 0) return at.index < graph.initializer_size() ? graph.mutable_initializer(at.index) : nullptr;
  if (at.node >= graph.node_size()) return nullptr;
  onnx::NodeProto& node = *graph.mutable_node(at.node);
  if (at.attribute >= node.attribute_size()) return nullptr;
  onnx::AttributeProto& attr = *node.mutable_attribute(at.attribute);
  if (at.tensor < 0) return attr.has_t() ? attr.mutable_t() : nullptr;
  return at.tensor < attr.tensors_size() ? attr.mutable_tensors(at.tensor) : nullptr;
}

}  // namespace

std::shared_ptr<onnx::ModelProto> parse_with_raw_data_in_place(std::span<const uint8_t> bytes,
                                                               const std::string& location) {
  if (bytes.size() > INT_MAX) return nullptr;
  Walk walk{bytes.data(), {}, {}, 0, 0, {}};
  std::vector<Piece> pieces;
  size_t length = 0;
  if (!walk_message(bytes.data(), bytes.size(), Kind::Model, walk, pieces, length)) return nullptr;
  auto model = std::make_shared<onnx::ModelProto>();
  PiecesStream stream(pieces);
  pbio::CodedInputStream coded(&stream);
  coded.SetTotalBytesLimit(INT_MAX);
  if (!model->ParseFromCodedStream(&coded) || !coded.ConsumedEntireMessage()) return nullptr;
  if (walk.in_place.empty()) return model;
  for (const InPlace& lifted : walk.in_place) {
    onnx::TensorProto* t = tensor_at(*model->mutable_graph(), lifted.path);
    // A tensor that also names other data would be ambiguous here: the ordinary parse decides.
    if (!t || t->has_raw_data() || t->data_location() == onnx::TensorProto_DataLocation_EXTERNAL ||
        t->external_data_size() > 0)
      return nullptr;
    t->set_data_location(onnx::TensorProto_DataLocation_EXTERNAL);
    for (const auto& [key, value] : {std::pair<const char*, std::string>{"location", location},
                                     {"offset", std::to_string(lifted.offset)},
                                     {"length", std::to_string(lifted.length)}}) {
      auto* entry = t->add_external_data();
      entry->set_key(key);
      entry->set_value(value);
    }
  }
  return model;
}

}  // namespace vkc::compiler::detail
