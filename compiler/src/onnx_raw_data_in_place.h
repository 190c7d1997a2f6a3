// Parsing a model file without copying its weights: the raw_data of large initializers stays in
// the file's mapping, referenced as external data of the file itself, instead of being copied
// into the parsed message (for a CNN of 14 MB the copy took longer than the rest of the import).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>

namespace onnx {
class ModelProto;
}

namespace vkc::compiler::detail {

/// raw_data of at least this many bytes is left in place.
inline constexpr uint64_t kInPlaceRawDataBytes = 4096;

/// Parses the serialized ModelProto `bytes` (the mapped file named `location` in the model's
/// directory) with the raw_data of at least kInPlaceRawDataBytes of every main-graph initializer
/// and main-graph node's tensor attribute (Constant's value) left out of the message: those
/// tensors become external data (data_location EXTERNAL, location `location`, the raw bytes'
/// offset and length in the file), which the importer reads in place. The rest of the message is
/// parsed from the file's bytes in place too.
/// Null when the bytes are not a well-formed message of that layout (the caller parses them the
/// ordinary way, which reports what is wrong) or when a tensor lifted this way also names other
/// data (ambiguous: left to the ordinary parse too).
std::shared_ptr<onnx::ModelProto> parse_with_raw_data_in_place(std::span<const uint8_t> bytes,
                                                               const std::string& location);

}  // namespace vkc::compiler::detail
