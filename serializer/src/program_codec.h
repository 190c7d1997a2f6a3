// Program <-> ET12 flatbuffer (internal). Segment placement and the eh00
// header are the writer's and reader's business.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "vkc/schema/program_generated.h"
#include "vkc/serializer/pte_reader.h"

namespace vkc::serializer::detail {

/// Where the writer placed every blob of a Program.
struct SegmentPlan {
  std::vector<SegmentInfo> segments;
  std::vector<uint64_t> constant_offsets;                 // [0] reserved
  std::vector<std::vector<uint32_t>> delegate_segments;   // [plan][delegate] -> segment
  std::vector<std::pair<std::string, uint32_t>> named_data;  // unique keys -> segment
};

/// The flatbuffer of `program`, without the extended header.
std::vector<uint8_t> encode_program(const Program& program, const SegmentPlan& plan);

/// Resolves BackendDelegate.processed of delegate `index` to its bytes.
using DelegateDataFn =
    std::function<ir::TensorData(const executorch_flatbuffer::BackendDelegateDataReference&, size_t index)>;

/// One execution plan; throws SerializeError on unknown union tags or
/// missing required tables. Indices are not range-checked here.
ExecutionPlan decode_plan(const executorch_flatbuffer::ExecutionPlan& plan, const DelegateDataFn& delegate_data);

}  // namespace vkc::serializer::detail
